"""Write the generated package into `--out`: all files at once, and only over files the
generator wrote itself.

The files are written into a new directory beside `--out` (`.NAME.XXXX.gradgen-new`),
which then takes the place of `--out` by renaming: a failure while writing leaves the
old package as it was, never a mix of old and new modules. When no file changes
nothing at all is written (so `make generate` with nothing to do touches nothing).
Files that stay the same keep their modification times, and their compiled copies in
`__pycache__` move along, so an unchanged module is not compiled again.

An existing `--out` is replaced only when everything in it is the generator's: each
file carries the `@generated` marker in its first lines (`user_kernels.py`, the verbatim
copy of a `--kernels` module, counts as the generator's when the package's
`__init__.py` does), and the only subdirectory is `__pycache__`. A symbolic link
anywhere in it (file, subdirectory, or `--out` itself) is refused rather than followed,
and so is an `--out` that names a file.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from pathlib import Path

from .errors import CodegenError, Location
from .kernels_module import MODULE_NAME

MARKER = b"@generated"
# How far into a file the marker is looked for (it is on the first line).
_MARKER_BYTES = 1024
_PYCACHE = "__pycache__"


def read_existing(out: Path) -> dict[str, bytes] | None:
    """The files of an existing output directory (name -> content), or None when `out`
    does not exist; a CodegenError when `out` is not a directory the generator may
    replace (see the module's docstring)."""
    try:
        status = os.lstat(out)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise CodegenError(
            f"cannot use --out: {error.strerror}", Location(str(out))
        ) from None
    if stat.S_ISLNK(status.st_mode):
        raise CodegenError(
            "--out is a symbolic link; give the directory it points to, or another path",
            Location(str(out)),
        )
    if not stat.S_ISDIR(status.st_mode):
        raise CodegenError("--out names a file, not a directory", Location(str(out)))
    files: dict[str, bytes] = {}
    foreign: list[str] = []
    try:
        entries = sorted(os.scandir(out), key=lambda entry: entry.name)
        for entry in entries:
            if entry.is_symlink():
                raise CodegenError(
                    f"{entry.name} in --out is a symbolic link; the generator does not "
                    "write through links (remove it)",
                    Location(str(out)),
                )
            if entry.is_dir(follow_symlinks=False):
                if entry.name != _PYCACHE:
                    foreign.append(entry.name + "/")
                continue
            if not entry.is_file(follow_symlinks=False):
                foreign.append(entry.name)
                continue
            with open(entry.path, "rb") as stream:
                files[entry.name] = stream.read()
    except OSError as error:
        raise CodegenError(
            f"cannot read --out: {error.strerror}", Location(str(out))
        ) from None
    generated_package = MARKER in files.get("__init__.py", b"")[:_MARKER_BYTES]
    for name, content in files.items():
        if MARKER in content[:_MARKER_BYTES]:
            continue
        if name == f"{MODULE_NAME}.py" and generated_package:
            continue
        foreign.append(name)
    if foreign:
        shown = ", ".join(sorted(foreign)[:5]) + (", ..." if len(foreign) > 5 else "")
        raise CodegenError(
            f"--out holds {len(foreign)} file(s) the generator did not write ({shown}); "
            "it replaces only a directory of its own output: remove them or choose "
            "another --out",
            Location(str(out)),
        )
    return files


def changed_names(
    files: dict[str, str], existing: dict[str, bytes] | None
) -> list[str]:
    """The files whose content differs from what is in the output directory."""
    return sorted(
        name
        for name, content in files.items()
        if existing is None or existing.get(name) != content.encode("utf-8")
    )


def stale_files(
    out: Path, files: dict[str, str], existing: dict[str, bytes] | None
) -> list[Path]:
    """The paths that would change (for `--check`): different, missing, or generated
    files that are no longer generated (they would be removed)."""
    removed = (
        [] if existing is None else [name for name in existing if name not in files]
    )
    return [out / name for name in sorted(changed_names(files, existing) + removed)]


def write_package(
    out: Path, files: dict[str, str], existing: dict[str, bytes] | None
) -> list[Path]:
    """Make `out` hold exactly `files`; return the paths whose content changed.

    `existing` is `read_existing(out)`; it is read again just before the swap, so a
    file put there meanwhile is not lost.
    """
    changed = changed_names(files, existing)
    if existing is not None and not changed and set(existing) <= set(files):
        return []
    out = Path(os.path.abspath(out))
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CodegenError(
            f"cannot create {parent}: {error.strerror}", Location(str(out))
        ) from None
    new = _fresh_name(parent, out.name, "new")
    try:
        os.mkdir(new)
        _fill(new, out, files, changed, existing)
        if read_existing(out) is None:  # checked again: the swap removes what is there
            os.rename(new, out)
        else:
            _swap(new, out, parent)
    except OSError as error:
        shutil.rmtree(new, ignore_errors=True)
        raise CodegenError(
            f"cannot write the package: {error.strerror}", Location(str(out))
        ) from None
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    return [out / name for name in changed]


def _fresh_name(parent: Path, name: str, what: str) -> Path:
    return parent / f".{name}.{secrets.token_hex(4)}.gradgen-{what}"


def _fill(
    new: Path,
    out: Path,
    files: dict[str, str],
    changed: list[str],
    existing: dict[str, bytes] | None,
) -> None:
    """Write every file into the new directory; unchanged ones keep their times, and
    their compiled copies in __pycache__ come along."""
    if existing is not None:
        os.chmod(new, stat.S_IMODE(os.stat(out).st_mode))
    for name, content in sorted(files.items()):
        path = new / name
        with open(path, "xb") as stream:
            stream.write(content.encode("utf-8"))
        if name not in changed:
            times = os.lstat(out / name)
            os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
    if existing is None:
        return
    kept = {Path(name).stem for name in files if name not in changed}
    old_cache = out / _PYCACHE
    if not (kept and os.path.isdir(old_cache) and not os.path.islink(old_cache)):
        return
    os.mkdir(new / _PYCACHE)
    for entry in os.scandir(old_cache):
        if entry.name.split(".", 1)[0] in kept and entry.is_file(follow_symlinks=False):
            shutil.copy2(entry.path, new / _PYCACHE / entry.name, follow_symlinks=False)


def _swap(new: Path, out: Path, parent: Path) -> None:
    """Put `new` in the place of `out` (two renames; `out` is missing only between
    them), then delete the old directory."""
    old = _fresh_name(parent, out.name, "old")
    os.rename(out, old)
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)
