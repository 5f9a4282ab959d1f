"""The fuzzer's inputs: seed entries, hostile material, and the hypothesis strategies
that mutate them (see tests/fuzz/test_codegen_fuzz.py)."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import yaml

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent.parent

# -- seeds --------------------------------------------------------------------------------

# Real entries, self-contained (their formulas call helpers only, not other operators).
REAL_OPERATORS = (
    "mul.Tensor",
    "pow.Tensor_Scalar",
    "sum.dim_IntList",
    "mean.dim",
    "clamp",
    "cat",
    "div.Tensor_mode",
    "permute",
    "add.Tensor",
)


def _operator_name(schema: str) -> str:
    return schema.split("(", 1)[0].strip()


@functools.cache
def _real_entries() -> tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    native = yaml.safe_load(
        (ROOT / "native_functions.yaml").read_text(encoding="utf-8")
    )
    derivatives = yaml.safe_load(
        (ROOT / "derivatives.yaml").read_text(encoding="utf-8")
    )
    wanted = set(REAL_OPERATORS)
    return (
        tuple(e for e in native if _operator_name(e["func"]) in wanted),
        tuple(e for e in derivatives if _operator_name(e["name"]) in wanted),
    )


def _renamed(entry: dict[str, Any], key: str) -> dict[str, Any]:
    """The entry with its operator renamed fz_<name>: generated packages are imported
    beside gradgen's own operators, whose names they must not take."""
    copy = dict(entry)
    copy[key] = "fz_" + copy[key]
    if "out_overload" in copy:  # names the operator: fz_add.out for fz_add
        copy["out_overload"] = "fz_" + copy["out_overload"]
    if "composite" in copy:  # not expected in the seeds, but keep them generating
        del copy["composite"]
    return copy


HAND_MADE_NATIVE = [
    {
        "func": "fz_scale(Tensor self, Scalar factor=2, *, str mode='plain') -> Tensor",
        "variants": "function, method",
        "numpy": "self * factor if mode == 'plain' else np.abs(self) * factor",
    },
    {
        "func": "fz_split2(Tensor self) -> (Tensor first, Tensor second)",
        "numpy": "(self * 0.5, self * 1.5)",
    },
    {
        "func": "fz_pick(Tensor self, int[2] dims=[0,1], bool flag=False) -> Tensor",
        "numpy": "np.negative(self) if flag else self + 0.0",
    },
]
HAND_MADE_DERIVATIVES = [
    {
        "name": HAND_MADE_NATIVE[0]["func"],
        "self": "grad * factor if mode == 'plain' else grad * factor * sgn_backward(self, grad, result)",
        "result": "self_t * factor",
    },
    {
        "name": HAND_MADE_NATIVE[1]["func"],
        "self": "grads[0] * 0.5 if grads[1] is None else grads[1] * 1.5",
    },
    {"name": HAND_MADE_NATIVE[2]["func"], "self": "-grad if flag else grad"},
]


def _seed_pairs() -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    native, derivatives = _real_entries()
    real = (
        [_renamed(e, "func") for e in native],
        [_renamed(e, "name") for e in derivatives],
    )
    one_real = ([real[0][0]], [real[1][0]])
    return [real, one_real, (list(HAND_MADE_NATIVE), list(HAND_MADE_DERIVATIVES))]


def _dump(entries: list[dict[str, Any]]) -> str:
    return yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=10**6)


# -- hostile material ---------------------------------------------------------------------

PAYLOAD_NAMES = frozenset(
    {
        "PWNED", "__import__", "eval", "exec", "open", "compile", "breakpoint",
        "getattr", "setattr", "delattr", "globals", "locals", "vars", "exit", "quit",
        "__subclasses__", "__globals__", "__builtins__", "__class__", "__dict__",
        "os", "sys", "subprocess", "builtins", "importlib", "ctypes", "pickle", "shutil",
        "f2py", "_datasource", "system", "popen", "tofile", "fromfile", "memmap",
        "save", "savez", "savetxt", "load", "loadtxt", "genfromtxt",
    }
)  # fmt: skip

HOSTILE = [
    '"', "'", '"""', "'''", "\\", "\\n", "\n", "\r", "\t", "#", "\x00", "\x07", "\x1b",
    "\x85", "\u2028", "\u200b", "\u202e", "\ufeff", "é", "ℕ", "İ", "\U0001f600", "ǅ",
    "{{", "}}", "{%", "%}", "{#", "#}", "${x}", "%s", "{0}",
    "(", ")", "[", "]", ",", "->", "=", "*", ":", "?", "!", "|", "&", ".", " ", "-",
    "~", "@", "`", ";", "<", ">",
    '"+PWNED()+"', "'+PWNED()+'", '"""+PWNED()+"""', "'''+PWNED()+'''",
    "\nPWNED()\n", "\\\nPWNED()#", '"""\nPWNED()\n"""', "'); PWNED(); ('",
    "__import__('os').system('true')", "np.f2py.os.system('true')",
    "np.lib._datasource.os.system('true')", "np.ma.core.builtins.eval('1')",
    "self.tofile('x')", "np.save('x', self)", "np.load('x', allow_pickle=True)",
    "eval('1')", "open('x')", "getattr(np, 'os')", "self.__class__", "lambda: 0",
    "(x := 1)", "...", "yield 1", "await x", "f'{PWNED()}'",
    "9" * 400, "1e999", "-0", "0x10", "1_0", "nan", "inf", "-9223372036854775809",
]  # fmt: skip

# Names the generated code uses for itself, keywords, builtins: what a YAML name must not
# be able to shadow or break.
NAMES = [
    "self", "other", "grad", "grads", "result", "result0", "grad_input_mask",
    "any_grad_defined", "needs_input_grad", "ks", "input", "redispatch", "functions",
    "operators", "set_history", "Node", "Tensor", "SavedVariable", "np", "dtype",
    "kernels", "ops", "_a", "def", "class", "lambda", "None", "True", "False", "not",
    "and", "in", "is", "if", "else", "for", "import", "return", "print", "len", "list",
    "int", "str", "bool", "float", "Scalar", "ScalarType", "Tensor[]", "int[]",
    "__init__", "__class__", "PWNED", "x" * 300, "é",
]  # fmt: skip

_TOKEN = re.compile(r"\w+|[^\w\s]|\s+")


def _hostile_text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(HOSTILE),
        st.sampled_from(NAMES),
        st.text(max_size=6),  # any unicode, surrogates excluded by hypothesis
    )


@st.composite
def _mutated_text(draw: st.DrawFn, text: str) -> str:
    """`text` after one to three character or token mutations."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "swap", "token"]))
        position = draw(st.integers(0, len(text)))
        if kind == "insert":
            text = text[:position] + draw(_hostile_text()) + text[position:]
        elif kind == "delete":
            text = text[:position] + text[position + draw(st.integers(1, 8)) :]
        elif kind == "replace":
            text = text[:position] + draw(_hostile_text()) + text[position + 1 :]
        else:
            tokens = _TOKEN.findall(text)
            if not tokens:
                continue
            i = draw(st.integers(0, len(tokens) - 1))
            if kind == "swap":
                j = draw(st.integers(0, len(tokens) - 1))
                tokens[i], tokens[j] = tokens[j], tokens[i]
            else:
                tokens[i] = draw(st.sampled_from(NAMES + HOSTILE[:60]))
            text = "".join(tokens)
    return text


def _other_value() -> st.SearchStrategy[Any]:
    """A YAML value of another type than the one expected."""
    leaf = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.just(10**500),
        st.floats(allow_nan=True),
        st.text(max_size=10),
        st.sampled_from(HOSTILE),
    )
    nested = st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.text(max_size=5), inner, max_size=3),
        ),
        max_leaves=8,
    )
    return st.one_of(
        nested,
        st.integers(1, 200).map(
            lambda n: functools.reduce(lambda v, _: [v], range(n), 0)
        ),
    )


ENTRY_KEYS = [
    "func", "name", "numpy", "composite", "variants", "type_promotion", "python_binding",
    "self", "other", "result", "output_differentiability", "self, other", "dispatch",
]  # fmt: skip


@st.composite
def _mutated_entries(
    draw: st.DrawFn, entries: list[dict[str, Any]], keys: tuple[str, ...] | None
) -> list[dict[str, Any]]:
    """`entries` after one mutation: of a string value (of `keys` when given), of a
    value's type, or of the keys and entries themselves."""
    entries = [dict(e) for e in entries]
    if not entries:
        return entries
    entry = entries[draw(st.integers(0, len(entries) - 1))]
    candidates = [
        k for k in entry if isinstance(entry[k], str) and (keys is None or k in keys)
    ]
    kind = draw(
        st.sampled_from(["text"] * 6 + ["type", "delete", "rename", "add", "entry"])
    )
    if kind == "text" and candidates:
        key = draw(st.sampled_from(candidates))
        entry[key] = draw(_mutated_text(entry[key]))
    elif kind == "type" and entry:
        entry[draw(st.sampled_from(sorted(entry)))] = draw(_other_value())
    elif kind == "delete" and entry:
        del entry[draw(st.sampled_from(sorted(entry)))]
    elif kind == "rename" and entry:
        old = draw(st.sampled_from(sorted(entry)))
        new = draw(st.one_of(st.sampled_from(ENTRY_KEYS + NAMES), _hostile_text()))
        value = entry.pop(old)
        entry[new] = value
    elif kind == "add":
        entry[draw(st.sampled_from(ENTRY_KEYS + NAMES))] = draw(
            st.one_of(st.sampled_from(HOSTILE + NAMES), _other_value())
        )
    elif kind == "entry":
        i = draw(st.integers(0, len(entries) - 1))
        if draw(st.booleans()):
            entries.insert(i, dict(entries[i]))  # the same operator twice
        else:
            del entries[i]
    return entries


@st.composite
def _mutated_document(draw: st.DrawFn, text: str) -> str | bytes:
    """A whole YAML document after a text-level mutation (the YAML itself may break)."""
    lines = text.splitlines(keepends=True) or ["\n"]
    kind = draw(
        st.sampled_from(
            [
                "chars",
                "chars",
                "line-dup",
                "line-del",
                "indent",
                "nest",
                "alias",
                "bytes",
                "tabs",
                "anchor-key",
            ]
        )
    )
    i = draw(st.integers(0, len(lines) - 1))
    if kind == "chars":
        return draw(_mutated_text(text))
    if kind == "line-dup":  # duplicate keys or entries
        lines.insert(i, lines[i])
    elif kind == "line-del":
        del lines[i]
    elif kind == "indent":
        lines[i] = " " * draw(st.integers(0, 6)) + lines[i].lstrip(" ")
    elif kind == "nest":  # very deep flow collections
        depth = draw(st.integers(50, 3000))
        lines.insert(i, f"- func: {'[' * depth}{']' * depth}\n")
    elif kind == "alias":  # a small alias bomb: 10**levels scalars from a few lines
        levels = draw(st.integers(2, 4))
        bomb = [
            "- func: x\n",
            '  b0: &b0 ["aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaaaaaaa"]\n',
        ]
        for level in range(1, levels + 1):
            bomb.append(
                f"  b{level}: &b{level} [{', '.join([f'*b{level - 1}'] * 10)}]\n"
            )
        lines[i:i] = bomb
    elif kind == "bytes":  # not UTF-8
        raw = "".join(lines).encode("utf-8")
        position = draw(st.integers(0, len(raw)))
        junk = draw(
            st.sampled_from(
                [b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\x80abc"]
            )
        )
        return raw[:position] + junk + raw[position:]
    elif kind == "tabs":
        lines[i] = lines[i].replace("  ", "\t", 1)
    elif kind == "anchor-key":  # merge keys and aliases used as values
        lines.insert(
            i,
            "- &e {func: 'fz_a(Tensor self) -> Tensor', numpy: 'self'}\n- *e\n- {<<: *e, func: 'fz_b(Tensor self) -> Tensor'}\n",
        )
    return "".join(lines)


# Structured mutations keep the input well-formed more often, so that hostile text
# reaches the later stages (the templates) instead of being refused by the parser.
STRING_CONTENT = [
    '"', "'", '"""', "'''", "\\", "\\'", '\\"', "\n", "\\n", "\x00", "\x1b", "\u2028",
    '"+PWNED()+"', "'+PWNED()+'", '"""+PWNED()+"""', "'''+PWNED()+'''", "\\'+PWNED()+\\'",
    "{{ PWNED() }}", "{% PWNED %}", "#", "é\U0001f600", "x" * 200,
]  # fmt: skip
ARGUMENT_TYPES = [
    "Tensor", "Tensor?", "Scalar", "Scalar?", "int", "int?", "int[]", "int[2]", "int[1]?",
    "float", "bool", "str", "str?", "ScalarType?", "Tensor[]", "SymInt", "Layout?",
    "int[999999999]", "int[" + "9" * 30 + "]", "Tensor(a)", "Tensor(a!)",
]  # fmt: skip
DEFAULTS = [
    "", "=None", "=True", "=False", "=maybe", "=0", "=-1", "=1.5", "=[]", "=[0,1]",
    "=" + "9" * 4400, "=1e999", "=contiguous_format", "=long",
]  # fmt: skip
HOSTILE_EXPRESSIONS = [
    "np.f2py.os.system('true')", "np.lib._datasource.os.system('true')",
    "np.ma.core.builtins.eval('1')", "np.f2py.subprocess.run('true')", "self.tofile('x')",
    "np.save('x', self)", "np.load('x', allow_pickle=True)", "np.PWNED", "__import__('os')",
    "PWNED()", "self.__class__", "getattr(np, 'os')", "(lambda: 0)()", "[x for x in ()]",
    "len('\"\"\"')", "'\"\"\"+PWNED()+\"\"\"'", "'\\'\\'\\'+PWNED()+\\'\\'\\''",
    "'\"+PWNED()+\"'", "'\\n\"\"\"\\nPWNED()\\n\"\"\"'", "'{{PWNED()}}'", "b'\\x00'",
    "f'{self}'", "'%s' % 1", "not_implemented('\"\"\"')", "1 if '\"\"\"' else 0",
    "2**64", "-(2**63)", "10**400", "(" * 40 + "1" + ")" * 40,
    "1" + " + 1" * 3000, "self" + ".T" * 400,
]  # fmt: skip


@st.composite
def _structured_schema(draw: st.DrawFn, schema: str) -> str:
    """A schema with an extra argument (hostile name, type or default), a new operator
    name, or new return names."""
    head, rest = schema.split("(", 1)
    arguments, returns = rest.rsplit(") -> ", 1)
    kind = draw(
        st.sampled_from(["argument", "argument", "argument", "name", "returns"])
    )
    if kind == "argument":
        kind_of_default = draw(st.integers(0, 2))
        if kind_of_default == 0:
            default = draw(st.sampled_from(DEFAULTS))
        else:
            quote = "'" if kind_of_default == 1 else '"'
            default = f"={quote}{draw(st.sampled_from(STRING_CONTENT))}{quote}"
        # half the time a plain `str fz_arg`, so that the default reaches the templates
        type_ = draw(st.one_of(st.just("str"), st.sampled_from(ARGUMENT_TYPES)))
        name = draw(st.one_of(st.just("fz_arg"), st.sampled_from(NAMES)))
        argument = f"{type_} {name}{default}"
        if "*" not in arguments and draw(st.booleans()):
            argument = "*, " + argument
        arguments = f"{arguments}, {argument}"
    elif kind == "name":
        overload = "." + head.split(".", 1)[1] if "." in head else ""
        head = draw(st.sampled_from(NAMES + [n + "_" for n in NAMES[:20]])) + overload
    else:
        names = draw(
            st.lists(st.sampled_from(NAMES + ["out0", "out1"]), min_size=1, max_size=3)
        )
        returns = "(" + ", ".join(f"Tensor {n}" for n in names) + ")"
    return f"{head}({arguments}) -> {returns}"


@st.composite
def _structured_formula(draw: st.DrawFn, formula: str) -> str:
    """A formula or kernel expression that also evaluates a hostile expression (a
    string constant with quotes, an attribute chain, a huge or deep expression)."""
    attack = draw(st.sampled_from(HOSTILE_EXPRESSIONS))
    form = draw(
        st.sampled_from(
            ["{f} if {a} else {f}", "({f}) + 0 * ({a})", "{a}", "({f}, {a})[0]"]
        )
    )
    return form.format(f=formula, a=attack)


SCHEMA_KEYS = ("func", "name")
FORMULA_KEYS = ("numpy",)  # and every derivatives.yaml key but name (see below)


@st.composite
def _schema_mutation(draw: st.DrawFn) -> tuple[str, str]:
    """One schema mutated; the same text in both files (so that the pair still joins),
    or in one of them only."""
    native, derivatives = draw(st.sampled_from(_seed_pairs()))
    native = [dict(e) for e in native]
    derivatives = [dict(e) for e in derivatives]
    i = draw(st.integers(0, len(native) - 1))
    old = native[i]["func"]
    if draw(st.booleans()):
        new = draw(_structured_schema(old))
    else:
        new = draw(_mutated_text(old))
    where = draw(st.sampled_from(["both", "both", "native"]))
    native[i]["func"] = new
    if where == "both":
        for entry in derivatives:
            if entry.get("name") == old:
                entry["name"] = new
    return _dump(native), _dump(derivatives)


@st.composite
def _formula_mutation(draw: st.DrawFn) -> tuple[str, str]:
    """A kernel expression or a derivative formula mutated."""
    native, derivatives = draw(st.sampled_from(_seed_pairs()))
    if draw(st.booleans()):  # a structured attack in one formula or expression
        in_native = draw(st.booleans())
        entries = [dict(e) for e in (native if in_native else derivatives)]
        entry = entries[draw(st.integers(0, len(entries) - 1))]
        keys = sorted(
            k
            for k, v in entry.items()
            if isinstance(v, str)
            and k not in ("func", "name", "variants", "type_promotion")
        )
        if keys:
            key = draw(st.sampled_from(keys))
            entry[key] = draw(_structured_formula(entry[key]))
        if in_native:
            native = entries
        else:
            derivatives = entries
    elif draw(st.booleans()):
        native = draw(_mutated_entries(native, FORMULA_KEYS))
    else:
        keys = tuple({k for e in derivatives for k in e if k != "name"})
        derivatives = draw(_mutated_entries(derivatives, keys))
    return _dump(native), _dump(derivatives)


@st.composite
def _entry_mutation(draw: st.DrawFn) -> tuple[str, str]:
    """Any value, key or entry of either file mutated (types, keys, duplicates)."""
    native, derivatives = draw(st.sampled_from(_seed_pairs()))
    for _ in range(draw(st.integers(1, 2))):
        if draw(st.booleans()):
            native = draw(_mutated_entries(native, None))
        else:
            derivatives = draw(_mutated_entries(derivatives, None))
    return _dump(native), _dump(derivatives)


@st.composite
def _document_mutation(draw: st.DrawFn) -> tuple[str | bytes, str | bytes]:
    """One whole document mutated as text (the YAML itself may break)."""
    native, derivatives = draw(st.sampled_from(_seed_pairs()))
    native_text, derivatives_text = _dump(native), _dump(derivatives)
    if draw(st.booleans()):
        return draw(_mutated_document(native_text)), derivatives_text
    return native_text, draw(_mutated_document(derivatives_text))
