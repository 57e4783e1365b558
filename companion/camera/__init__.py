"""The camera over the reveal spot: sources, recognition, flips (docs/camera.md).

Importing this package imports no camera library: a source's module (and
OpenCV or picamera2) is loaded only when it is chosen (:func:`open_camera`).
"""

from __future__ import annotations

from .base import (CameraError, CameraUnavailable, Frame, FrameSource, camera_names,
                   choose_camera, open_camera, parse_camera, register_camera)

__all__ = ["CameraError", "CameraUnavailable", "Frame", "FrameSource", "camera_names",
           "choose_camera", "open_camera", "parse_camera", "register_camera"]
