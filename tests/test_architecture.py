"""docs/architecture.md is the map of the library: its layer table names every package and top-level module of
``platform/parabit`` (and nothing that does not exist), and no module imports from a layer above its own. The
training kernel is used through its face (``parabit.training``) only."""

from __future__ import annotations

import ast
import re
import subprocess
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


def imports_of(path: Path, modules: set[str] | None = None) -> set[str]:
    """The ``parabit.*`` modules a file imports (anywhere in it: function-level imports and those for annotations
    only, under ``if TYPE_CHECKING:``, included: either way one module needs the other), dotted below ``parabit``.
    With ``modules`` (the library's), ``from parabit.tracking import tags`` is the module ``tracking.tags``, not the
    package's face."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("parabit."):
            module = node.module.removeprefix("parabit.")
            submodules = {f"{module}.{alias.name}" for alias in node.names} & (modules or set())
            found |= submodules
            if len(submodules) < len(node.names):
                found.add(module)
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


def test_the_training_kernel_is_used_through_its_faces_only():
    """Recipes, papers, commands, pipelines and jobs import ``parabit.training`` (what a recipe is built from) or
    ``parabit.training.run`` (what runs one), never another of its modules: the kernel's inside can change without
    touching them."""
    users = [path for folder in ("platform/parabit", "pipelines", "tuning", "jobs")
             for path in (ROOT / folder).rglob("*.py") if LIBRARY / "training" not in path.parents]
    inside = [f"{path.relative_to(ROOT)} imports parabit.{target}" for path in users for target in imports_of(path)
              if target.startswith("training.") and target != "training.run"]
    assert not inside, "imports from inside the training kernel:\n" + "\n".join(sorted(inside))


def module_of(path: Path) -> str:
    """A library file's dotted module name below ``parabit`` (a package: its folder's name)."""
    return ".".join(path.relative_to(LIBRARY).with_suffix("").parts).removesuffix(".__init__")


def import_circles() -> list[list[str]]:
    """The groups of library modules that import each other in a loop (:func:`imports_of`), each sorted: the strongly
    connected components of the import graph with more than one module."""
    modules = {module_of(path): path for path in LIBRARY.rglob("*.py") if path != LIBRARY / "__init__.py"}
    graph = {name: {target for target in imports_of(path, set(modules)) if target in modules and target != name}
             for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return circles


def test_no_modules_import_each_other_in_a_circle():
    """A circle (``data.bitext`` ↔ ``data.heldout`` once) means neither module can be understood, tested or moved
    without the other: one of them holds what the other needs, or a contract belongs to the lower one."""
    assert not import_circles(), "modules that import each other: " + "; ".join(" ↔ ".join(c)
                                                                              for c in import_circles())


def test_the_readme_layout_names_every_top_level_part_of_the_library_and_the_checkout_and_only_those():
    """The README's Layout block: an indented line names parts of ``platform/parabit``, an unindented one folders of
    the checkout (the words before a line's description that end in ``/`` or ``.py``)."""
    text = (ROOT / "README.md").read_text()
    block = text[text.index("## Layout"):].split("```", 2)[1]
    named_library, named_root = set(), set()
    for line in block.splitlines():
        words = re.findall(r"(?:^|\s)([\w./]+(?:/|\.py))(?=\s)", line.split("   ")[0] + " ")
        (named_library if line.startswith("  ") else named_root).update(word.rstrip("/") for word in words)
    library = {path.name for path in LIBRARY.iterdir()
               if (path.is_dir() and (path / "__init__.py").is_file()) or (path.suffix == ".py" and path.stem != "__init__")}
    assert named_library == library
    missing = sorted(name for name in named_root if not (ROOT / name).exists())
    assert not missing, f"the README's Layout names folders that do not exist: {missing}"
    tracked = subprocess.run(["git", "ls-tree", "-d", "--name-only", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    folders = {name for name in tracked if not name.startswith(".")}
    assert folders <= {name.split("/")[0] for name in named_root}, sorted(folders)
