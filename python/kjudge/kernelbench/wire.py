"""The KernelBench adapter's messages between the judge and its candidate worker: a JSON header
and the raw bytes of the tensors it lists, over a pipe. Raw bytes, never pickle: the judge reads
what an untrusted process wrote, and unpickling runs code. Sizes are capped on the reading side
so a worker cannot make the judge allocate without bound."""
from __future__ import annotations

import json
import os
import struct
from typing import Any, BinaryIO

_HEADER_CAP = 1 << 20
_LENGTH = struct.Struct("<Q")

# The torch dtypes that cross the pipe, with their sizes in bytes.
DTYPES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4,
          "int16": 2, "int8": 1, "uint8": 1, "bool": 1}


class WireError(Exception):
    """A message that breaks the format: the peer died, lied about a size or sent junk."""


def _read_exactly(stream: BinaryIO, count: int) -> bytes:
    chunks, left = [], count
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise WireError(f"the pipe closed {count - left} bytes into a {count}-byte read")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def send(stream: BinaryIO, header: dict[str, Any], tensors: tuple = ()) -> None:
    """Writes `header` with the tensors' dtype, shape and size under "tensors", then their bytes
    (copied to the host, contiguous)."""
    import torch
    metas, blobs = [], []
    for t in tensors:
        t = t.detach().to("cpu").contiguous()
        metas.append({"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
                      "nbytes": t.numel() * t.element_size()})
        blobs.append(t)
    text = json.dumps({**header, "tensors": metas}).encode()
    stream.write(_LENGTH.pack(len(text)) + text)
    for t in blobs:
        if t.numel():
            stream.write(memoryview(t.view(-1).view(torch.uint8).numpy()))
    stream.flush()


def receive(stream: BinaryIO, *, byte_cap: int) -> tuple[dict[str, Any], list]:
    """The next message: its header and its tensors (torch CPU tensors). WireError when the peer
    is gone or the message breaks the format or asks for more than `byte_cap` bytes in all.
    torch is imported only for a message with tensors: the worker reads its first message
    single-threaded, before it confines itself."""
    (length,) = _LENGTH.unpack(_read_exactly(stream, _LENGTH.size))
    if length > _HEADER_CAP:
        raise WireError(f"a header of {length} bytes (at most {_HEADER_CAP})")
    try:
        header = json.loads(_read_exactly(stream, length))
    except ValueError as e:
        raise WireError(f"a header that is not JSON: {e}") from None
    metas = header.pop("tensors", [])
    if not isinstance(header, dict) or not isinstance(metas, list):
        raise WireError("a header that is not an object with a tensor list")
    total = 0
    tensors = []
    for meta in metas:
        dtype, shape, nbytes = _checked_meta(meta)
        total += nbytes
        if total > byte_cap:
            raise WireError(f"tensors of more than {byte_cap} bytes in one message")
        import torch
        data = bytearray(_read_exactly(stream, nbytes)) if nbytes else bytearray()
        flat = torch.frombuffer(data, dtype=getattr(torch, dtype)) if nbytes else \
            torch.empty(0, dtype=getattr(torch, dtype))
        tensors.append(flat.reshape(shape))
    return header, tensors


def _checked_meta(meta: Any) -> tuple[str, list[int], int]:
    if not isinstance(meta, dict) or meta.get("dtype") not in DTYPES:
        raise WireError(f"a tensor of an unknown dtype: {meta!r:.200}")
    shape = meta.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise WireError(f"a tensor with a bad shape: {shape!r:.200}")
    count = 1
    for d in shape:
        count *= d
    nbytes = count * DTYPES[meta["dtype"]]
    if meta.get("nbytes") != nbytes:
        raise WireError(f"a tensor whose size disagrees with its shape: {meta!r:.200}")
    return meta["dtype"], shape, nbytes


def pipe_streams(read_fd: int, write_fd: int) -> tuple[BinaryIO, BinaryIO]:
    """Buffered binary streams over two descriptors."""
    return os.fdopen(read_fd, "rb", buffering=1 << 16), os.fdopen(write_fd, "wb", buffering=1 << 16)
