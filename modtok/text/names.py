"""Checks of what a user names: a language code (a manifest key, a code typed on the command
line) and a path that names no file.

>>> check_language_code("npi_Deva", "m.yaml")
>>> missing("/nowhere/a.txt")
'no such file or directory'
"""

from __future__ import annotations

import errno
import os
import re

from modtok.errors import DataError

LANGUAGE_CODE = re.compile(r"[a-z]{3}_[A-Z][a-z]{3}")  # ISO 639-3 _ ISO 15924, as FLORES-200 writes them
NEW_CODES_ENV = "MODTOK_NEW_CODES"  # comma-separated codes a user vouches for (a language no registry has yet)


def check_language_code(code, where) -> None:
    """Refuse a manifest key that is not a real language code: ``xxx_Scrp`` (ISO 639-3
    language, ISO 15924 script, as FLORES-200 names them) that the IANA subtag registry
    knows (``langcodes``, installed with wordfreq). A code of one's own is accepted when it
    is listed in ``$MODTOK_NEW_CODES`` (comma-separated).

    >>> check_language_code("npi_Deva", "m.yaml")
    >>> check_language_code("english", "m.yaml")
    Traceback (most recent call last):
    ...
    modtok.errors.DataError: m.yaml: 'english' is not a language code: write ISO 639-3 + ISO 15924 as FLORES-200 does (eng_Latn, npi_Deva, zho_Hans), or list a code of your own in $MODTOK_NEW_CODES
    """
    import langcodes

    if isinstance(code, str) and code in os.environ.get(NEW_CODES_ENV, "").split(","):
        return
    if not (isinstance(code, str) and LANGUAGE_CODE.fullmatch(code) and langcodes.tag_is_valid(code.replace("_", "-"))):
        raise DataError(f"{where}: {code!r} is not a language code: write ISO 639-3 + ISO 15924 as FLORES-200 "
                        f"does (eng_Latn, npi_Deva, zho_Hans), or list a code of your own in ${NEW_CODES_ENV}")


SYMLINK_LOOP = "a symlink loop (following its links comes back to a link already followed): point it at a real file"


def missing(path) -> str:
    """Why ``path`` names no file: a symlink loop, a symlink to nothing, or nothing there.

    >>> import tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp()); (d / "a.txt").symlink_to(d / "b.txt"); (d / "b.txt").symlink_to(d / "a.txt")
    >>> missing(d / "a.txt").split(" (")[0], missing(d / "c.txt")
    ('a symlink loop', 'no such file or directory')
    """
    try:
        os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return SYMLINK_LOOP
        if os.path.islink(path):
            return f"a symlink to {os.readlink(path)}, which does not exist"
    return "no such file or directory"
