"""Ray Tune sweeps over training configs: search spaces as YAML data, and the sweep driver."""
