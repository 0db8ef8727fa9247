"""Training on Ray Train: configs, data preparation (token ids), the per-worker loop and the driver."""
