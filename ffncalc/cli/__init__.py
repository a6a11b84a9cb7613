"""The command line: typer commands over the library (commands.py) and each option's help (option_help.py).

The only package that spells options as flags; the library and its engines name fields (tests/test_library_terms.py).
"""

from .commands import app, main, run

__all__ = ["app", "main", "run"]
