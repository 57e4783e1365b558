"""The faces taught at one table: a folder of images, one a face.

Teaching is once per table and deck: the host holds each face under the
camera and names it; the frame's card is found, straightened and saved as
``<folder>/<face>.png`` (:func:`teach`). The folder is the table's own,
beside the store (:func:`faces_folder`); no card art is shipped. Teaching a
face again replaces it. A face's name is the game's card name (Chope!'s
``table:red``); the file name escapes the ``:``.
"""

from __future__ import annotations

from pathlib import Path

import cv2

from .recognise import Look, find_card, straighten


class TeachError(ValueError):
    """No card found in the frame, or a bad face name."""


def faces_folder(store_path, table: str = "default") -> Path:
    """Where a table's faces are kept: ``faces/<table>/`` beside its store."""
    if not table.replace("-", "").replace("_", "").isalnum():
        raise TeachError(f"a table name must be a word, not {table!r}")
    return Path(store_path).resolve().parent / "faces" / table


def _file(folder: Path, face: str) -> Path:
    if not face or "/" in face or face.startswith(".") or "\\" in face:
        raise TeachError(f"not a face name: {face!r}")
    return folder / (face.replace(":", "~") + ".png")


def teach(folder: Path, face: str, image) -> Path:
    """Save the card in ``image`` (a frame) as ``face``; TeachError when no
    card is found in it."""
    quad = find_card(image)
    if quad is None:
        raise TeachError("no card found: hold it flat and whole under the camera")
    folder.mkdir(parents=True, exist_ok=True)
    path = _file(folder, face)
    cv2.imwrite(str(path), straighten(image, quad))
    return path


def taught(folder: Path) -> dict[str, Look]:
    """``{face: Look}`` of every face taught in ``folder`` (none: {})."""
    out = {}
    for path in sorted(Path(folder).glob("*.png")) if Path(folder).is_dir() else ():
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is not None:
            out[path.stem.replace("~", ":")] = Look.of(image)
    return out


__all__ = ["TeachError", "faces_folder", "teach", "taught"]
