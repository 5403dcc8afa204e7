"""The server's standard input as pygls reads it, with bounds.

pygls reads a message as header lines (``readline``) and then ``Content-Length``
bytes (``read(n)``) in one call, so a header that says ``Content-Length:
99999999999999999999`` made the server allocate that much (or fail to: the server
exited), and a header line that never ends grew without limit.  Here a header line
is read in pieces of at most :data:`MAX_HEADER_LINE` bytes (pygls ignores the pieces
it cannot read as a header), and a body larger than :data:`MAX_MESSAGE_BYTES` is read
and dropped in small chunks: the stream stays in step with the client (the next
message is read as the next message), the editor's log says a message was skipped,
and memory does not grow.  A body that never comes is the end of the input, as for
any other message.
"""

from __future__ import annotations

import logging
from typing import BinaryIO

logger = logging.getLogger(__name__)

#: a header line longer than this is read in pieces (real ones are ~30 bytes)
MAX_HEADER_LINE = 64 * 1024
#: a document the CLI would read (5 MB) fits many times over, even JSON-escaped
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_CHUNK = 64 * 1024
#: what pygls is handed for a skipped message: a JSON-RPC notification nobody handles (pygls
#: logs it as an unknown method and carries on, as for any notification it does not know)
SKIPPED = b'{"jsonrpc": "2.0", "method": "$/replayssm/skippedMessage"}'


class BoundedInput:
    """``readline`` and ``read`` of a binary stream, never holding more than the bounds."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def readline(self) -> bytes:
        return self.stream.readline(MAX_HEADER_LINE)

    def read(self, size: int) -> bytes:
        if size <= MAX_MESSAGE_BYTES:
            return self.stream.read(size)
        left = size
        while left > 0:
            chunk = self.stream.read(min(left, _CHUNK))
            if not chunk:
                return b""  # the input ended inside the message: pygls stops, as at any end
            left -= len(chunk)
        logger.warning("skipped a message of %d bytes (more than %d, the limit)", size, MAX_MESSAGE_BYTES)
        return SKIPPED
