"""The pyfunc model is logged from code: saving writes no pickle, and loading it gives the embedder's vectors."""

from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import torch
import yaml

from parabit.embedder import SentenceEmbedder
from parabit.export.pyfunc import save_embedder_model
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary

SENTENCES = ["a man plays a guitar", "the cat sleeps", ""]


def _avg_embedder(words: str, dim: int) -> SentenceEmbedder:
    """An untrained English AVG embedder over ``words``."""
    vocab = Vocabulary([f"en:{w}" for w in words.split()])
    spec = {"encoder": "avg", "vocab_size": len(vocab), "dim": dim, "options": {}}
    return SentenceEmbedder(SentenceEmbedder.build_encoder(spec, sparse=False), spec, vocab, Tokenizer("regexp"))


def test_saved_model_holds_no_pickle_and_predicts_like_the_embedder(tmp_path):
    torch.manual_seed(0)
    embedder = _avg_embedder("a man plays guitar the cat sleeps", dim=8)

    folder = save_embedder_model(embedder, tmp_path / "model")

    assert not [p for p in Path(folder).rglob("*") if p.suffix in (".pkl", ".pickle", ".cloudpickle")]
    flavor = yaml.safe_load((Path(folder) / "MLmodel").read_text())["flavors"]["python_function"]
    assert flavor["model_code_path"].endswith("model_code.py") and "python_model" not in flavor
    predicted = mlflow.pyfunc.load_model(str(folder)).predict(pd.DataFrame({"text": SENTENCES}))
    np.testing.assert_allclose(predicted, embedder.encode(SENTENCES), rtol=1e-6, atol=1e-6)


def test_the_models_code_is_one_archive_that_a_fresh_process_imports_parabit_from(tmp_path):
    """A remote artifact store takes a model's files one request at a time: the package travels as one file, and a
    process that loads the model runs the code in it (not whatever parabit it has installed)."""
    import json
    import subprocess
    import sys

    embedder = _avg_embedder("a man plays guitar", dim=4)
    folder = save_embedder_model(embedder, tmp_path / "model")

    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert [f for f in files if f.startswith("code/")] == ["code/parabit.zip"]
    assert len(files) <= 10, files
    loads = ("import sys, mlflow, pandas as pd; model = mlflow.pyfunc.load_model(sys.argv[1]); "
             "print(model.predict(pd.DataFrame({'text': ['a man plays guitar']})).tolist()); "
             "print(sys.modules['parabit.embedder'].__file__)")
    run = subprocess.run([sys.executable, "-c", loads, str(folder)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    vectors, module = run.stdout.strip().splitlines()[-2:]
    np.testing.assert_allclose(json.loads(vectors), embedder.encode(["a man plays guitar"]), rtol=1e-6, atol=1e-6)
    assert module == str(folder / "code" / "parabit.zip" / "parabit" / "embedder.py")


def _imported_distributions(module_file: Path, package_dir: Path) -> set[str]:
    """The distributions whose modules loading ``module_file`` may import: its imports, at module level or inside a
    function (nltk's tokenizers are imported when a model's tokenizer is built), following parabit's own modules (and
    their packages' ``__init__``) transitively; standard-library modules map to none."""
    import ast
    from importlib.metadata import packages_distributions

    seen, third_party, todo = set(), set(), [module_file]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] != "parabit":
                    third_party.add(parts[0])
                    continue
                for depth in range(1, len(parts) + 1):  # parabit/__init__.py, parabit/x/__init__.py, parabit/x/y.py
                    base = package_dir.parent.joinpath(*parts[:depth])
                    todo += [p for p in (base / "__init__.py", base.with_suffix(".py")) if p.is_file()]
    distributions = packages_distributions()
    return {d.lower() for module in third_party for d in distributions.get(module, [])}


def test_saved_model_requires_public_versions_of_what_it_imports_and_nothing_else(tmp_path):
    from packaging.requirements import Requirement

    from parabit.export.pyfunc import MODEL_CODE, PACKAGE_DIR

    embedder = _avg_embedder("a man plays guitar", dim=4)
    folder = save_embedder_model(embedder, tmp_path / "model")

    requirements = [Requirement(line) for line in (folder / "requirements.txt").read_text().split()]
    for requirement in requirements:
        (pin,) = requirement.specifier
        assert pin.operator == "==" and "+" not in pin.version, f"{requirement}: not a public release"
    assert "torch==2.13.0" in map(str, requirements)  # the .venv has 2.13.0+cpu: the label is dropped

    required = {r.name.lower() for r in requirements}
    imported = _imported_distributions(MODEL_CODE, PACKAGE_DIR)
    # mlflow's modules belong to mlflow, mlflow-skinny and mlflow-tracing: requiring mlflow covers them
    imported = {d for d in imported if not d.startswith("mlflow-")}
    # transformers is imported inside the transformer encoder's functions, which only a transformer model runs (its
    # own requirements name it: the test below).
    assert required == imported - TRANSFORMER_ONLY - TRAINING_ONLY


TRANSFORMER_ONLY = {"transformers"}
# numba (and llvmlite, its code generator) is imported inside the word-table encoder's training functions (the fused
# step's row bags), which predicting never runs: a served model does not require it.
TRAINING_ONLY = {"numba", "llvmlite"}
# What transformers reads a saved checkpoint with: its tokenizer.json and model.safetensors.
CHECKPOINT_READERS = {"tokenizers", "safetensors"}


def test_a_transformer_model_requires_transformers_and_what_reads_its_checkpoint(tmp_path):
    from packaging.requirements import Requirement

    from parabit.encoders import TransformerEmbedder, TransformerEncoder
    from parabit.export.pyfunc import MODEL_CODE, PACKAGE_DIR
    from parabit.teacher.model import packaged_checkpoint

    embedder = TransformerEmbedder(TransformerEncoder.from_checkpoint(packaged_checkpoint()))
    folder = save_embedder_model(embedder, tmp_path / "model")
    required = {Requirement(line).name.lower() for line in (folder / "requirements.txt").read_text().split()}
    imported = {d for d in _imported_distributions(MODEL_CODE, PACKAGE_DIR) if not d.startswith("mlflow-")}
    assert required == (imported - TRAINING_ONLY) | CHECKPOINT_READERS
