#!/usr/bin/env python3
"""Renders testdata/bad-inputs.json (the bad-input table that every
binding's suite runs) as docs/bad-inputs.md.
Usage: python3 testdata/bad_inputs.py [--check]  (--check: fail when stale)"""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "testdata" / "bad-inputs.json"
DOC = ROOT / "docs" / "bad-inputs.md"

INTRO = """# Bad and edge-case inputs

What every binding answers for inputs a caller gets wrong or that sit at the
edges of the API. Generated from `testdata/bad-inputs.json` by
`testdata/bad_inputs.py`; each row is a test in every binding
(`core/tests/bad_inputs.rs`, `ffi-c/tests/bad_inputs.c`,
`py/tests/test_bad_inputs.py`, `node/__test__/bad-inputs.test.mjs`).

- Rust: the `RingError` variant. C: the `ring_result` code (`ring_last_error()`
  holds the message). Python: the exception class (all subclass
  `shardring.RingError` except `UnicodeEncodeError`). JS: the error's `code`.
- Ids are compared as bytes: ids that differ only in Unicode normalisation are
  different nodes. Normalise ids before building a ring if your sources disagree.
- A ring holds at most 2^24 points (16,777,216); point counts use checked
  arithmetic, so no vnode or weight value can overflow, allocate without
  bound, or wrap.
- Keys are any bytes, of any length (a string key is its UTF-8 bytes).
- A string key or id must be valid Unicode: a lone surrogate (JS, Python)
  is `RING_INVALID_UTF8` in every binding, never replaced by U+FFFD.
- **Defaults and numbers, one rule.** Leaving a parameter out gives its
  default: a JSON field absent, a JavaScript property absent or `undefined`,
  a Python keyword not passed, a C `ring_options_t` field whose bit is not
  set in `fields` (and which holds 0: C refuses a value without its bit,
  naming it). Anything passed must be a valid value: JSON and
  JavaScript `null` and Python `None` are type errors for every parameter
  (the one exception is Python's `Node(id, weight, zone=None)`, whose
  `zone` attribute is `None` for a node without a zone); booleans are never
  numbers; 0 is never a default (vnodes 0 is `ZeroVnodes`, a table size 0
  `InvalidTableSize`). A number the parameter's type cannot hold (a negative
  seed or `n`, vnodes above 2^32 - 1, an int beyond any float in Python) is
  Python's `OutOfRangeError` (a `RingError` and a `ValueError`) and JS's
  `RangeError`, both with code `ERR_OUT_OF_RANGE`; Rust's and C's integer
  types cannot hold one.
- JSON configs are read strictly: a duplicate key anywhere, an unknown field
  or a field of the wrong type is `InvalidConfig`, naming the field's path.

| input | Rust | C | Python | JS |
|---|---|---|---|---|
"""


def cell(text):
    return text.replace("|", "\\|")


def doc(cases):
    rows = []
    for case in cases:
        expect = case["expect"]
        if "error" in expect:
            error = expect["error"]
            answers = [error["rust"], error["c"], error["python"], error["js"]]
            answers = [a if a.startswith("(") else f"`{a}`" for a in answers]
        else:
            answers = [f"ok: `{json.dumps(expect['ok'], ensure_ascii=False)}`"] * 4
        rows.append(f"| **{cell(case['name'])}**: {cell(case['input'])} | " + " | ".join(map(cell, answers)) + " |")
    return INTRO + "\n".join(rows) + "\n"


CLI_INTRO = """
## The command line

The `shardring` binary's answers, from the `cli_cases` of the same file
(`cli/tests/bad_inputs.rs` runs each row). A key is bytes, exactly as given,
from an argument or a line alike; a line ends at LF; a key ending in CR is
refused, and so is a key argument holding LF (`lookup` prints one line per
key); `--null` reads NUL-terminated keys that may hold any other byte, and
takes such arguments as they are.
Every error is one line, `shardring: ` and the message, with exit code 2;
`{config}` and the like stand for the paths of the row's files.

| input | answer |
|---|---|
"""


def shown(value):
    """Bytes of the file (a string or {"hex": ...}) as a table shows them."""
    data = bytes.fromhex(value["hex"]) if isinstance(value, dict) else value.encode()
    text = "".join(chr(b) if 32 <= b < 127 else {9: "\\t", 10: "\\n", 13: "\\r"}.get(b, f"\\x{b:02x}") for b in data)
    return f"`{text}`"


def cli_doc(cases):
    rows = []
    for case in cases:
        expect = case["expect"]
        if "stdout" in expect:
            answer = f"prints {shown(expect['stdout'])}"
        else:
            answer = f"exit 2: `shardring: {expect['error']}`"
        rows.append(f"| **{cell(case['name'])}**: {cell(case['input'])} | {cell(answer)} |")
    return CLI_INTRO + "\n".join(rows) + "\n"


def main():
    table = json.loads(SOURCE.read_text())
    cases = table["cases"]
    outputs = {DOC: doc(cases) + cli_doc(table["cli_cases"])}
    if "--check" in sys.argv:
        stale = [str(p.relative_to(ROOT)) for p, text in outputs.items() if not p.exists() or p.read_text() != text]
        if stale:
            sys.exit(f"stale: {', '.join(stale)}; run python3 testdata/bad_inputs.py")
        return
    for path, text in outputs.items():
        path.write_text(text)


if __name__ == "__main__":
    main()
