"""The C lexer (modtok/text/_lexc.c), built by ``pip install -e .``; everything else is in pyproject.toml.

The extension is optional: without a C compiler the install goes on and modtok counts with the
numba lexer, and says so (``modtok.text.lexer.ENGINE_NOTE``). The source's SHA-256 is compiled
into the module, so that a module built from another version of ``_lexc.c`` is refused at
import (``modtok.text.lexer``) instead of used.
"""

import hashlib
import sys
from pathlib import Path

from setuptools import Extension, setup

SOURCE = "modtok/text/_lexc.c"
digest = hashlib.sha256((Path(__file__).parent / SOURCE).read_bytes()).hexdigest()

setup(ext_modules=[Extension(
    "modtok.text._lexc", [SOURCE], optional=True,
    define_macros=[("LEXC_SOURCE_SHA256", f'"{digest}"')],
    extra_compile_args=[] if sys.platform == "win32" else ["-O3", "-std=c11", "-Wall"],
)])
