"""Writes the JSONPath parse tables checkov would otherwise rebuild on every path it reads (run in the checks venv).

checkov renders a CloudFormation template's `Fn::Sub`s through bc-jsonpath-ng, whose parser asks PLY for its
LALR tables on every parse and tells PLY not to write them: PLY rebuilds them each time (~50 ms), 173 times
for this project's template, 8 of checkov's 10 CPU seconds. PLY reads tables from a module next to the
grammar when one is there and its signature matches the grammar (ply/yacc.py, `yacc()`: `read_table`), and
ignores it otherwise, so a table written here can only make checkov faster, never change what it finds.

Each table is written beside its parser, through a temporary file and a rename, so a reader never imports half
a table; a table already there is kept only if PLY reads it for the grammar as it is. An empty, damaged or stale
one is written again: bc-jsonpath-ng's own parse raises on a damaged table, and checkov swallows that error and
checks less.

usage: checkov_parse_tables.py   (with the checks venv's python)
"""

from __future__ import annotations

import inspect
import os
import tempfile
from pathlib import Path

# The table module PLY looks for: bc_jsonpath_ng's parse_token_stream names it after parser.py and the start
# symbol, in the package of the parser's class.
TABLE_MODULE = "parser_jsonpath_parsetab"


def parsers() -> list[object]:
    """The two grammars checkov parses with: the base one (checkov.common.util.json_utils) and the extended one."""
    from bc_jsonpath_ng.ext.parser import ExtentedJsonPathParser
    from bc_jsonpath_ng.parser import JsonPathParser

    return [JsonPathParser(), ExtentedJsonPathParser()]


def write_table(parser: object) -> Path:
    """The parser's LALR table, as PLY writes it, beside the module that defines the parser's class."""
    import ply.yacc

    folder = Path(inspect.getfile(type(parser))).parent
    target = folder / f"{TABLE_MODULE}.py"
    if target.exists() and reads_its_table(parser):
        return target
    target.unlink(missing_ok=True)  # PLY imports whatever is there before it generates: a damaged table would raise
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        ply.yacc.yacc(
            module=parser,
            tabmodule=TABLE_MODULE,
            outputdir=scratch,
            start="jsonpath",
            write_tables=True,
            debug=False,
        )
        os.replace(Path(scratch) / f"{TABLE_MODULE}.py", target)
    return target


def reads_its_table(parser: object) -> bool:
    """Whether PLY builds the parser from the table on disk: generating one instead, or failing to import it, is no."""
    import sys

    import ply.yacc

    def generated(*args: object, **kwargs: object) -> None:
        raise LookupError("no usable table")

    module = f"{type(parser).__module__.rsplit('.', 1)[0]}.{TABLE_MODULE}"
    sys.modules.pop(module, None)  # read the file as it is now
    real, ply.yacc.LRGeneratedTable = ply.yacc.LRGeneratedTable, generated
    try:
        ply.yacc.yacc(module=parser, tabmodule=TABLE_MODULE, start="jsonpath", write_tables=False, debug=False)
    except Exception:  # noqa: BLE001 - a damaged table raises whatever its import raises
        return False
    finally:
        ply.yacc.LRGeneratedTable = real
        sys.modules.pop(module, None)
    return True


def main() -> None:
    for parser in parsers():
        write_table(parser)


if __name__ == "__main__":
    main()
