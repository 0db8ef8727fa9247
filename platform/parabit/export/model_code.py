"""The pyfunc model's code, logged as a file ("models from code"): MLflow runs this file to rebuild the model instead of
unpickling a stored object, so loading a parabit model deserialises no pickle. The weights are a plain state dict
read with ``torch.load(weights_only=True)``."""

import mlflow.models

from parabit.export.pyfunc import EmbeddingModel

mlflow.models.set_model(EmbeddingModel())
