"""DI-engine's ``ding.utils.compression_helper.jpeg_data_compressor``, which its Atari wrappers import."""

from __future__ import annotations

import numpy as np


def jpeg_data_compressor(data: np.ndarray) -> bytes:
    """The JPEG bytes of an image (imports OpenCV, the ``atari`` extra's ``opencv-python-headless``)."""
    try:
        import cv2
    except ImportError as error:
        raise ImportError("jpeg_data_compressor needs OpenCV: pip install 'ding-env[atari]'") from error
    encoded, buffer = cv2.imencode(".jpg", data)
    if not encoded:
        raise ValueError(f"OpenCV could not encode an array of shape {data.shape} and dtype {data.dtype} as JPEG")
    return buffer.tobytes()
