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
  set in `fields`. Anything passed must be a valid value: JSON and
  JavaScript `null` and Python `None` are type errors for every parameter
  (the one exception is Python's `Node(id, weight, zone=None)`, whose
  `zone` attribute is `None` for a node without a zone); booleans are never
  numbers; 0 is never a default (vnodes 0 is `ZeroVnodes`, a table size 0
  `InvalidTableSize`).
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


def main():
    cases = json.loads(SOURCE.read_text())["cases"]
    outputs = {DOC: doc(cases)}
    if "--check" in sys.argv:
        stale = [str(p.relative_to(ROOT)) for p, text in outputs.items() if not p.exists() or p.read_text() != text]
        if stale:
            sys.exit(f"stale: {', '.join(stale)}; run python3 testdata/bad_inputs.py")
        return
    for path, text in outputs.items():
        path.write_text(text)


if __name__ == "__main__":
    main()
