"""Every code block in README.md and docs/*.md runs and shows what it says.

The conventions a block follows (docs/README.md explains them to writers):

```python
    Runs on its own, in a fresh namespace, with `import gradgen` of the repository.
    `print(...)  # text`: the line prints `text` (all output must be announced so).
    `...  # raises RuntimeError: message`: this line raises that exception (or a
    subclass) with that message. The message may go on over the comment lines right
    after it (`# more of the message`); whitespace is compared collapsed, and a message
    ending in `...` only has to start the real one.
    `...  # warns UserWarning: message`: the same for a warning.
```python generated
    The same, after generating a package from the repository's YAML files plus the
    example's YAML blocks (chosen as for `text codegen` below): the operators they add
    are then available as `gradgen.NAME(...)` and `tensor.NAME(...)`, as after
    `make generate`.
```yaml native_functions.yaml  /  ```yaml derivatives.yaml
    Entries of that file for the section's example. A section with such blocks and no
    `text codegen` block must load without errors when appended to the repository's
    files (a section with only derivatives.yaml entries is about the document's first
    native_functions.yaml block).
```text codegen
    What the generator reports for the example's two files alone, exactly. Each file
    is the last block of that name before this one in its section, or else the last
    one in the nearest enclosing section (a `###` section's YAML serves its `####`
    sections).
```yaml (no file name)
    Must be valid YAML.
A table whose header is `| schema | error |`
    Each row: `parse_schema(schema)` raises CodegenError with that message.
Anything else (sh, console, text) is not run.

A section is the text between two headings. Besides running the blocks, the tests
check that docs/errors.md explains every error message the generator and the
autograd runtime can raise, and that docs/yaml-reference.md lists every name a kernel
or a formula may use, read from the code so the documents cannot go stale.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import io
import os
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

import gradgen
from gradgen.codegen import CodegenError, generate, parse_schema

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NATIVE = "native_functions.yaml"
DERIVATIVES = "derivatives.yaml"


# -- reading the documents ----------------------------------------------------------------


@dataclass
class Block:
    document: Path
    line: int  # 1-based line of the opening fence
    info: list[str]  # the info string's words: ["python", "generated"]
    text: str
    section: int  # index of the section the block is in
    ancestors: tuple[
        int, ...
    ]  # the sections enclosing it, outermost first, its own last

    @property
    def language(self) -> str:
        return self.info[0] if self.info else ""

    @property
    def id(self) -> str:
        return f"{self.document.name}:{self.line}"


@dataclass
class Table:
    document: Path
    line: int
    header: list[str]
    rows: list[tuple[int, list[str]]] = field(default_factory=list)


_FENCE = re.compile(r"^(\s*)```(.*)$")
_HEADING = re.compile(r"^#{1,6} ")


def read_document(path: Path) -> tuple[list[Block], list[Table]]:
    """The fenced blocks and the tables of a markdown file, with their sections."""
    blocks: list[Block] = []
    tables: list[Table] = []
    section = 0
    open_sections: list[tuple[int, int]] = [(0, 0)]  # (heading level, section)
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if fence:
            indent = len(fence.group(1))
            start = index
            body: list[str] = []
            index += 1
            while index < len(lines) and not lines[index].strip().startswith("```"):
                body.append(_dedent(lines[index], indent))
                index += 1
            text = "\n".join(body) + "\n"
            ancestors = tuple(s for _, s in open_sections)
            blocks.append(
                Block(path, start + 1, fence.group(2).split(), text, section, ancestors)
            )
        elif _HEADING.match(line):
            section += 1
            level = len(line) - len(line.lstrip("#"))
            while open_sections and open_sections[-1][0] >= level:
                open_sections.pop()
            open_sections.append((level, section))
        elif (
            line.startswith("|")
            and index + 1 < len(lines)
            and set(lines[index + 1].replace(" ", "")) <= set("|-:")
        ):
            table = Table(path, index + 1, _cells(line))
            index += 2
            while index < len(lines) and lines[index].startswith("|"):
                table.rows.append((index + 1, _cells(lines[index])))
                index += 1
            tables.append(table)
            continue
        index += 1
    return blocks, tables


def _dedent(line: str, indent: int) -> str:
    """A line of a block fenced at `indent` (inside a list item), without that indent."""
    return line[indent:] if line[:indent].strip() == "" else line.lstrip()


def _cells(line: str) -> list[str]:
    """The cells of a table row; `\\|` is a `|` inside a cell."""
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [cell.strip().replace("\\|", "|") for cell in cells]


def _unquote(cell: str) -> str:
    """A table cell without its code span backticks."""
    match = re.fullmatch(r"(`+) ?(.*?) ?\1", cell)
    return match.group(2) if match else cell


READ = {path: read_document(path) for path in DOCUMENTS}
BLOCKS = [block for path in DOCUMENTS for block in READ[path][0]]
PYTHON = [b for b in BLOCKS if b.language == "python"]
CODEGEN = [b for b in BLOCKS if b.info[:2] == ["text", "codegen"]]
SCHEMA_ROWS = [
    (table, line, cells)
    for path in DOCUMENTS
    for table in READ[path][1]
    if [c.lower() for c in table.header] == ["schema", "error"]
    for line, cells in table.rows
]


def _yaml_file(block: Block) -> str | None:
    """The file a ```yaml FILE block belongs to, or None."""
    return block.info[1] if block.language == "yaml" and len(block.info) > 1 else None


def _example_files(block: Block) -> dict[str, str]:
    """The two YAML files of the example `block` belongs to: file name -> text.

    For each file, the last ```yaml FILE block before `block` in its section; a file
    the section has not shown yet is the last one shown in the nearest enclosing
    section (so a `###` section's YAML serves its `####` sections).
    """
    blocks = READ[block.document][0]
    files: dict[str, str] = {}
    for section in (block.section, *reversed(block.ancestors[:-1])):
        shown = {
            _yaml_file(b): b.text
            for b in blocks
            if b.section == section
            and b.line < block.line
            and _yaml_file(b) is not None
        }
        for name, text in shown.items():
            files.setdefault(name, text)
    return files


def _section_yaml(block: Block) -> dict[str, str]:
    """Every ```yaml FILE block of `block`'s section, joined per file; formulas
    without a native_functions.yaml block are for the enclosing section's one, or
    else the document's first."""
    blocks = READ[block.document][0]
    files: dict[str, str] = {}
    for other in blocks:
        if other.section == block.section and (name := _yaml_file(other)) is not None:
            files[name] = files.get(name, "") + other.text
    if NATIVE not in files:  # formulas alone: for the enclosing or the first example
        files[NATIVE] = _example_files(block).get(NATIVE) or _document_default(
            block.document, NATIVE
        )
    return files


def _document_default(document: Path, name: str) -> str:
    """The first YAML block named `name` in the document (the running example)."""
    for block in READ[document][0]:
        if block.language == "yaml" and block.info[1:2] == [name]:
            return block.text
    raise AssertionError(f"{document.name} has no ```yaml {name} block to fall back on")


def _normalise(text: str) -> str:
    return " ".join(text.split())


# -- running python blocks ----------------------------------------------------------------

_EXPECTATION = re.compile(r"#\s*(raises|warns)\s+([A-Za-z_][\w.]*):\s?(.*)$")


@dataclass(frozen=True)
class Expectation:
    kind: str  # "raises" or "warns"
    exception: str  # e.g. "RuntimeError"
    message: str  # whitespace-collapsed
    line: int  # 1-based line in the block


def expectation(block: str) -> Expectation | None:
    """The block's `# raises` / `# warns` comment, with its continuation lines."""
    lines = block.splitlines()
    found = [(i, m) for i, line in enumerate(lines) if (m := _EXPECTATION.search(line))]
    if not found:
        return None
    assert len(found) == 1, "a block may raise only once"
    index, match = found[0]
    message = [match.group(3)]
    for following in lines[index + 1 :]:
        stripped = following.strip()
        if not stripped.startswith("#"):
            break
        message.append(stripped[1:])
    return Expectation(
        match.group(1), match.group(2), _normalise(" ".join(message)), index + 1
    )


def expected_output(block: str) -> list[str]:
    """The comment after each `print(...)`: what that line prints."""
    return [
        line.split("#", 1)[1].strip()
        for line in block.splitlines()
        if line.lstrip().startswith("print(") and "#" in line
    ]


def _message_matches(expected: str, actual: str) -> bool:
    actual = _normalise(actual)
    if expected.endswith("..."):
        return actual.startswith(expected[:-3].rstrip())
    return actual == expected


def _raised_at(error: BaseException, filename: str) -> int | None:
    """The line of the block's top level the exception went through."""
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == filename:
            return traceback.tb_lineno
        traceback = traceback.tb_next
    return None


def _exception_names(error: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(error).__mro__}


def run_python(block: Block) -> None:
    filename = f"<{block.id}>"
    code = compile(block.text, filename, "exec")
    expected = expectation(block.text)
    output = io.StringIO()
    with contextlib.redirect_stdout(output), warnings.catch_warnings():
        if expected is not None and expected.kind == "warns":
            warnings.simplefilter("error")
        try:
            exec(code, {"__name__": "__docs__"})
        except Exception as error:  # noqa: BLE001  (compared with the expectation)
            if expected is None:
                raise
            where = _raised_at(error, filename)
            assert expected.exception in _exception_names(
                error
            ), f"expected {expected.exception}, got {type(error).__name__}: {error}"
            assert _message_matches(expected.message, str(error)), (
                f"the message differs\n  shown: {expected.message}\n  real:  "
                f"{_normalise(str(error))}"
            )
            assert (
                where == expected.line
            ), f"raised at block line {where}, not at the marked line {expected.line}"
        else:
            assert (
                expected is None
            ), f"line {expected.line} did not {expected.kind[:-1]}"
    assert output.getvalue().splitlines() == expected_output(block.text)


@pytest.fixture(autouse=True)
def _clean_global_state():
    """A block that fails half-way may leave a mode switched on; switch it off."""
    yield
    from gradgen import anomaly_mode
    from gradgen.autograd import forward_ad

    anomaly_mode.set_detect_anomaly(False)
    if forward_ad._state.level is not None:
        forward_ad.exit_dual_level()
    gradgen.set_default_dtype(gradgen.float32)
    gradgen.set_grad_enabled(True)


# -- generating the documents' YAML -------------------------------------------------------

_PACKAGES: dict[str, object] = {}


_ENTRY_START = re.compile(r"^- (?:func|name): ([\w.]+)\(", re.M)


def _without(repository: str, example: str) -> str:
    """The repository's file without its entries for the operators `example` declares:
    a document adds an operator the repository has since gained (logaddexp) as if it
    were new. The comments after a dropped entry (a family header) stay."""
    declared = set(_ENTRY_START.findall(example))
    kept = []
    for chunk in re.split(r"\n(?=- (?:func|name): )", repository):
        match = _ENTRY_START.match(chunk)
        if match and match.group(1) in declared:
            chunk = chunk.partition("\n\n")[2]
        kept.append(chunk)
    return "\n".join(kept)


def _appended(files: dict[str, str], name: str) -> str:
    example = files.get(name, "")
    return _without((ROOT / name).read_text(encoding="utf-8"), example) + "\n" + example


def _generated_package(files: dict[str, str], tmp_root: Path):
    """The repository's operators plus the documents' ones, as an imported package."""
    key = hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest()[:12]
    if key not in _PACKAGES:
        name = f"docs_ops_{key}"
        directory = tmp_root / key
        directory.mkdir(parents=True, exist_ok=True)
        for file in (NATIVE, DERIVATIVES):
            (directory / file).write_text(_appended(files, file), encoding="utf-8")
        generate(directory / NATIVE, directory / DERIVATIVES, directory / name)
        sys.path.insert(0, str(directory))
        try:
            _PACKAGES[key] = importlib.import_module(name)
        finally:
            sys.path.remove(str(directory))
    return _PACKAGES[key]


@pytest.fixture(scope="module")
def generated_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("docs-generated")


def _generate_alone(directory: Path, native: str, derivatives: str) -> None:
    """Generate from two files with relative names, as a user running make there."""
    (directory / NATIVE).write_text(native, encoding="utf-8")
    (directory / DERIVATIVES).write_text(derivatives, encoding="utf-8")
    previous = os.getcwd()
    os.chdir(directory)
    try:
        generate(Path(NATIVE), Path(DERIVATIVES), directory / "out")
    finally:
        os.chdir(previous)


# -- the tests ----------------------------------------------------------------------------


def test_the_documents_have_examples() -> None:
    names = {path.name for path in DOCUMENTS}
    assert {"README.md", "yaml-reference.md", "errors.md", "architecture.md"} <= names
    readme = [b for b in PYTHON if b.document.name == "README.md"]
    assert len(readme) >= 3
    assert any(
        b.info[1:] == ["generated"] for b in readme
    ), "README's new operator runs"


@pytest.mark.parametrize("block", PYTHON, ids=[b.id for b in PYTHON])
def test_python_block_runs_and_shows_what_it_says(
    block: Block, generated_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if block.info[1:] == ["generated"]:
        package = _generated_package(_example_files(block), generated_root)
        for name in package.ops.__all__:
            if not hasattr(gradgen, name):
                monkeypatch.setattr(
                    gradgen, name, getattr(package.ops, name), raising=False
                )
        for name, method in package.METHODS.items():
            if name not in gradgen.Tensor.__dict__:
                monkeypatch.setattr(gradgen.Tensor, name, method, raising=False)
    else:
        assert block.info == ["python"], f"unknown python block tag {block.info[1:]}"
    monkeypatch.chdir(ROOT)  # examples run from the repository's root
    run_python(block)


@pytest.mark.parametrize("block", CODEGEN, ids=[b.id for b in CODEGEN])
def test_codegen_block_shows_what_the_generator_reports(
    block: Block, tmp_path: Path
) -> None:
    files = _example_files(block)
    native, derivatives = files.get(NATIVE, ""), files.get(DERIVATIVES, "")
    with pytest.raises(CodegenError) as raised:
        _generate_alone(tmp_path, native, derivatives)
    assert str(raised.value) == block.text.strip()
    assert not (
        tmp_path / "out"
    ).exists(), "nothing is written when the input is broken"


YAML_SECTIONS = sorted(
    {
        (b.document, b.section): b
        for b in BLOCKS
        if b.language == "yaml"
        and len(b.info) > 1
        and not any(
            c.document == b.document and c.section == b.section for c in CODEGEN
        )
    }.values(),
    key=lambda b: (b.document.name, b.line),
)


@pytest.mark.parametrize("block", YAML_SECTIONS, ids=[b.id for b in YAML_SECTIONS])
def test_yaml_example_loads_with_the_repository_files(
    block: Block, tmp_path: Path
) -> None:
    from gradgen.codegen import load

    files = _section_yaml(block)
    assert set(files) <= {NATIVE, DERIVATIVES}, f"unknown YAML file names {set(files)}"
    for name in (NATIVE, DERIVATIVES):
        (tmp_path / name).write_text(_appended(files, name), encoding="utf-8")
    model = load.load(tmp_path / NATIVE, tmp_path / DERIVATIVES)
    added = yaml.safe_load(files.get(NATIVE, "")) or []
    names = {str(f.schema) for f in model.native_functions}
    assert all(entry["func"] in names for entry in added)


def test_plain_yaml_blocks_are_valid_yaml() -> None:
    for block in BLOCKS:
        if block.info == ["yaml"]:
            yaml.safe_load(block.text)


@pytest.mark.parametrize(
    "schema, message",
    [(_unquote(cells[0]), _unquote(cells[1])) for _, _, cells in SCHEMA_ROWS],
    ids=[f"{table.document.name}:{line}" for table, line, _ in SCHEMA_ROWS],
)
def test_schema_table_row(schema: str, message: str) -> None:
    with pytest.raises(CodegenError) as raised:
        parse_schema(schema)
    assert str(raised.value) == message


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@pytest.mark.parametrize("document", DOCUMENTS, ids=[p.name for p in DOCUMENTS])
def test_relative_links_lead_somewhere(document: Path) -> None:
    text = re.sub(r"```.*?```", "", document.read_text(encoding="utf-8"), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        assert linked.exists(), f"{document.name}: {target} does not exist"
        if anchor:
            headings = re.findall(
                r"^#+ (.*)$", linked.read_text(encoding="utf-8"), re.M
            )
            assert anchor in {
                _anchor(h) for h in headings
            }, f"{document.name}: no #{anchor}"


def test_every_block_has_a_known_kind() -> None:
    known = {"python", "yaml", "text", "sh", "console"}
    unknown = [b.id for b in BLOCKS if b.language not in known]
    assert not unknown, f"blocks without a known language: {unknown}"


# -- the documents explain every error and list every name --------------------------------


def _literal_pieces(node: ast.AST, constants: dict[str, str]) -> list[str]:
    """The literal text of a message expression, cut where a value is inserted."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        text = ""
        for value in node.values:
            if isinstance(value, ast.Constant):
                text += value.value
            elif (
                isinstance(value, ast.FormattedValue)
                and isinstance(value.value, ast.Name)
                and value.value.id in constants
            ):
                text += constants[value.value.id]
            else:
                text += "\0"
        return text.split("\0")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal_pieces(node.left, constants) + _literal_pieces(
            node.right, constants
        )
    if isinstance(node, ast.Name) and node.id in constants:
        return [constants[node.id]]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    ):
        return [
            piece
            for text in _literal_pieces(node.func.value, constants)
            for piece in re.split(r"\{[^}]*\}", text)
        ]
    return []


def error_fragments(path: Path, exception_names: set[str]) -> list[tuple[int, str]]:
    """(line, fragment) for the messages of every `Name(...)` call of an exception class
    in `path`: each literal piece of a message with at least two words (or the longest
    piece), so a message template is matched by the text around its values."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            with contextlib.suppress(ValueError, SyntaxError, TypeError):
                value = ast.literal_eval(node.value)
                if isinstance(value, str):
                    constants[node.targets[0].id] = value
    fragments = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in exception_names
            and node.args
        ):
            pieces = [
                _normalise(p).strip(" '\"{}:;,.(")
                for p in _literal_pieces(node.args[0], constants)
            ]
            pieces = [p for p in pieces if p]
            worded = [p for p in pieces if " " in p]
            for piece in worded or sorted(pieces, key=len)[-1:]:
                fragments.append((node.lineno, piece))
    return fragments


def _explained_text(document: Path) -> str:
    """The document as one whitespace-collapsed text, raised messages joined up."""
    messages = [
        e.message
        for b in READ[document][0]
        if b.language == "python" and (e := expectation(b.text))
    ]
    return _normalise(document.read_text(encoding="utf-8")) + " " + " ".join(messages)


ERRORS = ROOT / "docs" / "errors.md"
CODEGEN_SOURCES = sorted((ROOT / "codegen").glob("*.py"))
RUNTIME_SOURCES = [
    ROOT / "src" / "gradgen" / name
    for name in (
        "engine.py",
        "graph.py",
        "tensor.py",
        "variable_type_utils.py",
        "factories.py",
        "arguments.py",
        "overloads.py",
        "dispatch.py",
        "indexing.py",
        "view_history.py",
        "devices.py",
        "random.py",
        "legacy_tensors.py",
        "autograd/__init__.py",
        "autograd/_transform_slots.py",
        "autograd/variable.py",
        "autograd/forward_ad.py",
        "autograd/function.py",
        "autograd/_function_forward_ad.py",
        "autograd/gradcheck.py",
        "autograd/_gradcheck_inputs.py",
        "autograd/_gradcheck_jacobians.py",
        "autograd/_gradcheck_checks.py",
        "autograd/_gradcheck_fast.py",
        "autograd/_gradcheck_batched.py",
        "autograd/graph.py",
        "autograd/_mutation_on_saved.py",
        "autograd/_engine_switches.py",
        "utils/checkpoint.py",
        "utils/checkpoint_frame.py",
        "utils/checkpoint_selective.py",
        "utils/checkpoint_debug.py",
        "autograd/functional.py",
        "func/eager_transforms.py",
        "func/jacobians.py",
        "func/vmap.py",
        "func/autograd_function.py",
        "func/batching.py",
        "func/batching_rules.py",
        "func/batching_rules_random.py",
        "func/batching_rules_scatter.py",
        "func/batching_rules_strided.py",
        "func/randomness.py",
        "func/functional_call.py",
        "func/pytree.py",
        "func/einops.py",
        "compile/runtime.py",
        "compile/compiler.py",
    )
]
RUNTIME_EXCEPTIONS = {
    "RuntimeError",
    "TypeError",
    "ValueError",
    "NotImplementedError",
    "AttributeError",
    "IndexError",
    "AssertionError",
    "GradcheckError",
    "CheckpointError",
    "DimensionBindError",
}


@pytest.mark.parametrize(
    "source", CODEGEN_SOURCES, ids=[p.name for p in CODEGEN_SOURCES]
)
def test_errors_md_explains_every_codegen_error(source: Path) -> None:
    text = _explained_text(ERRORS)
    missing = [
        f"{source.name}:{line}: {fragment!r}"
        for line, fragment in error_fragments(source, {"CodegenError"})
        if fragment not in text
    ]
    assert not missing, "docs/errors.md does not explain:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    "source",
    RUNTIME_SOURCES,
    ids=[str(p.relative_to(ROOT / "src")) for p in RUNTIME_SOURCES],
)
def test_errors_md_explains_every_autograd_runtime_error(source: Path) -> None:
    text = _explained_text(ERRORS)
    missing = [
        f"{source.relative_to(ROOT)}:{line}: {fragment!r}"
        for line, fragment in error_fragments(source, RUNTIME_EXCEPTIONS)
        if fragment not in text
    ]
    assert not missing, "docs/errors.md does not explain:\n" + "\n".join(missing)


REFERENCE = ROOT / "docs" / "yaml-reference.md"


def _listed_names(title: str) -> set[str]:
    """The functions listed as `name(...)` code spans under a heading of the reference."""
    text = REFERENCE.read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ |\Z)", text, re.S | re.M)
    assert match, f"docs/yaml-reference.md has no heading '{title}'"
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)\(", match.group(1)))


def test_reference_lists_exactly_the_formula_helpers() -> None:
    from gradgen import helpers

    assert _listed_names("Helpers") == set(helpers.__all__)


def test_reference_lists_exactly_the_kernel_helpers() -> None:
    from gradgen import numpy_kernels

    assert _listed_names("Kernel helpers") == set(numpy_kernels.__all__)


def test_reference_lists_exactly_the_composites() -> None:
    from gradgen.codegen.load import defined_functions

    assert _listed_names("Composites") == set(defined_functions("composites"))


def test_reference_names_every_key_type_and_sugar() -> None:
    from gradgen.codegen.allowed import TENSOR_QUERY_METHODS
    from gradgen.codegen.formulas import (
        LIST_METADATA_SUGAR,
        METADATA_SUGAR,
        SCALAR_METHODS,
    )
    from gradgen.codegen.load import DERIVATIVE_CONTROL_KEYS, NATIVE_KEYS
    from gradgen.codegen.schema import BaseTy

    text = REFERENCE.read_text(encoding="utf-8")
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    for name in (*NATIVE_KEYS, *DERIVATIVE_CONTROL_KEYS):
        assert f"`{name}:`" in text or f"`{name}`" in text, name
    for name in (
        *METADATA_SUGAR,
        *LIST_METADATA_SUGAR,
        *TENSOR_QUERY_METHODS,
        *SCALAR_METHODS,
    ):
        assert name in words, name
    for name in BaseTy.__members__:
        assert name in words, name
    for name in (
        "auto_element_wise",
        "auto_linear",
        "not_implemented",
        "non_differentiable",
        "grad_input_mask",
        "retain_variables",
        "grads",
        "result",
    ):
        assert name in words, name
