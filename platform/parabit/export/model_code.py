"""The pyfunc model's code, logged as a file ("models from code"): MLflow runs this file to rebuild the model instead of
unpickling a stored object, so loading a parabit model deserialises no pickle. The weights are a plain state dict
read with ``torch.load(weights_only=True)``."""

import sys
from pathlib import Path

import mlflow.models

# The model's code is parabit's sources as one archive in the model's code folder, which MLflow puts on the import
# path before running this file: the archive goes first, so the model runs the code it was logged with.
_ARCHIVE = next((str(Path(entry, "parabit.zip")) for entry in sys.path if entry and Path(entry, "parabit.zip").is_file()),
                None)
if _ARCHIVE and _ARCHIVE not in sys.path:
    sys.path.insert(0, _ARCHIVE)

from parabit.export.pyfunc import EmbeddingModel  # noqa: E402 (imported from the archive put first above)

mlflow.models.set_model(EmbeddingModel())
