"""docs/architecture.md is the map of the library: its layer table names every package and top-level module of
``platform/parabit`` (and nothing that does not exist), and no module imports from a layer above its own. The
training kernel is used through its face (``parabit.training``) only."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "platform" / "parabit"
DOCUMENT = ROOT / "docs" / "architecture.md"


def library_parts() -> set[str]:
    """Every package (dotted, below ``parabit``) and every module directly in ``parabit``."""
    packages = {".".join(init.parent.relative_to(LIBRARY).parts) for init in LIBRARY.rglob("__init__.py")
                if init.parent != LIBRARY}
    modules = {path.stem for path in LIBRARY.glob("*.py") if path.name != "__init__.py"}
    return packages | modules


def documented_layers() -> list[set[str]]:
    """The parts each row of the document's layer table names (its second column), from the bottom layer up."""
    text = DOCUMENT.read_text()
    table = text[text.index("| layer | packages |"):].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines()[2:] if line.startswith("|")]
    return [set(re.findall(r"`([a-z_.]+)`", row.split("|")[2])) for row in rows]


def owner(module: str, parts: set[str]) -> str | None:
    """The documented part a dotted module (below ``parabit``) belongs to: the longest part that prefixes it (None
    for a part the table does not name, which the first test reports)."""
    candidates = [part for part in parts if module == part or module.startswith(part + ".")]
    return max(candidates, key=len, default=None)


def imports_of(path: Path) -> set[str]:
    """The ``parabit.*`` modules a file imports (anywhere in it, function-level imports included), dotted below
    ``parabit``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("parabit."):
            found.add(node.module.removeprefix("parabit."))
        elif isinstance(node, ast.Import):
            found |= {alias.name.removeprefix("parabit.") for alias in node.names if alias.name.startswith("parabit.")}
    return found


def test_the_layer_table_names_every_package_and_only_those():
    documented = set().union(*documented_layers())
    actual = library_parts()
    assert not actual - documented, f"packages docs/architecture.md does not name: {sorted(actual - documented)}"
    assert not documented - actual, f"docs/architecture.md names what does not exist: {sorted(documented - actual)}"


def test_no_module_imports_from_a_layer_above_its_own():
    layers = documented_layers()
    parts = set().union(*layers)
    level = {part: index for index, layer in enumerate(layers) for part in layer}
    upward = []
    for path in LIBRARY.rglob("*.py"):
        if path.parent == LIBRARY and path.name == "__init__.py":
            continue
        module = ".".join(path.relative_to(LIBRARY).with_suffix("").parts).removesuffix(".__init__")
        source = owner(module, parts)
        for target in imports_of(path):
            imported = owner(target, parts)
            if source is not None and imported is not None and level[imported] > level[source]:
                upward.append(f"{path.relative_to(ROOT)} ({source}) imports parabit.{target} ({imported})")
    assert not upward, "imports from a higher layer:\n" + "\n".join(sorted(upward))


def test_the_training_kernel_is_used_through_its_face_only():
    """Recipes, papers, commands, pipelines and jobs import ``parabit.training`` (what its ``__all__`` exports), never
    one of its modules: the kernel's inside can change without touching them."""
    users = [path for folder in ("platform/parabit", "pipelines", "tuning", "jobs")
             for path in (ROOT / folder).rglob("*.py") if LIBRARY / "training" not in path.parents]
    inside = [f"{path.relative_to(ROOT)} imports parabit.{target}" for path in users for target in imports_of(path)
              if target.startswith("training.")]
    assert not inside, "imports from inside the training kernel:\n" + "\n".join(sorted(inside))
