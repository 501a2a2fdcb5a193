"""Does an address answer as the engine asked for, within a few seconds? (layer L5)

Joining a cluster with Ray's or Dask's own client waits minutes on an address that
accepts TCP but never answers (a wrong port, a firewall that holds connections, another
service) and, for a Ray head with token authentication (what ``ray start --head`` turns
on in the Ray dpol tests with, 2.60), retries for 20 s before a generic error. These
probes speak just enough of each protocol to tell, within :data:`CONNECT_TIMEOUT`
seconds, and before anything is created (a sweep's results store, a training run's
checkpoint): :func:`check_address` is the one check of ``dpol sweep``, ``dpol run --by``
and ``dpol train``.

* Ray: the head's GCS is a gRPC server. The probe sends the HTTP/2 preface and one
  read-only call (``GetClusterId``, without a token): an HTTP/2 server answers with its
  SETTINGS frame; a head that wants a token answers the call with gRPC status 16
  (UNAUTHENTICATED), which is refused here unless ``RAY_AUTH_MODE=token`` is set (then
  Ray's client sends the token). dpol never reads or sends the token itself.
* Dask: the scheduler's ``identity`` call must answer ``{"type": "Scheduler", ...}``.
  An ``inproc://`` address (a scheduler that this process started with
  ``processes=False``) needs no TCP: it must be listened on in this process, and then
  answers the same call.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import struct
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from dpol._validation import fail

__all__ = ["CONNECT_TIMEOUT", "check_address", "connect_timeout", "probe_dask", "probe_inproc",
           "probe_ray", "reach"]

#: seconds an address gets to answer as a Ray head or a Dask scheduler before the sweep
#: or the training run is refused (the environment variable ``DPOL_CONNECT_TIMEOUT``
#: overrides it, for a slow network)
CONNECT_TIMEOUT = 5.0

#: the HTTP/2 client preface and an empty SETTINGS frame (RFC 9113, 3.4 and 6.5)
_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
#: the read-only GCS call of the probe (the head answers it once a client may join)
_GCS_CALL = "/ray.rpc.NodeInfoGcsService/GetClusterId"
#: gRPC's ``grpc-status`` header as a literal HPACK field (how Ray's gRPC sends it)
_STATUS = re.compile(rb"\x0bgrpc-status([\x00-\x7f])")
#: the largest handshake a Dask scheduler is taken to announce (its own is under 1 KiB)
_GREETING_MAX = 1 << 24
#: what a user who meets a head with token authentication must do
TOKEN_HINT = ("set RAY_AUTH_MODE=token where dpol runs, with the cluster's token in "
              "~/.ray/auth_token or RAY_AUTH_TOKEN (`ray get-auth-token` on the head "
              "prints it)")


def connect_timeout() -> float:
    """:data:`CONNECT_TIMEOUT`, or the seconds ``DPOL_CONNECT_TIMEOUT`` sets.

    Examples
    --------
    >>> connect_timeout() == CONNECT_TIMEOUT or "DPOL_CONNECT_TIMEOUT" in os.environ
    True
    """
    text = os.environ.get("DPOL_CONNECT_TIMEOUT")
    if text is None:
        return CONNECT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise fail("DPOL_CONNECT_TIMEOUT", "be a number of seconds > 0", text)
    return value


def check_address(backend: str, address: object) -> str | None:
    """Refuse an address that is not ``host:port`` (or a URL) or does not answer as a Ray
    head / Dask scheduler within :data:`CONNECT_TIMEOUT` seconds.

    ``None`` starts a local engine; Ray's ``"auto"`` (a head started on this machine by
    ``ray start --head``, found by Ray itself) is passed on unchecked, and so is the
    protocol of a Dask address other than ``tcp://`` and ``inproc://`` (its host and port
    are checked).

    Examples
    --------
    >>> check_address("dask", None) is None
    True
    >>> check_address("local", "tcp://127.0.0.1:1")
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: address must be left unset for --backend local (it runs \
on this machine); got 'tcp://127.0.0.1:1'
    """
    if address is None:
        return None
    if backend == "local":
        raise fail("address", "be left unset for --backend local (it runs on this machine)",
                   address)
    if not isinstance(address, str) or not address:
        raise fail("address", "be host:port or a URL such as tcp://host:8786", address)
    if backend == "ray" and address == "auto":
        return address
    if backend == "dask" and address.startswith("inproc://"):
        probe_inproc(address)
        return address
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None:
        raise fail("address", "be host:port or a URL such as tcp://host:8786", address)
    if backend == "ray":  # a head's GCS, or with ray:// a Ray Client server
        probe_ray(host, port, address, gcs=parts.scheme != "ray")
    elif parts.scheme == "tcp":
        probe_dask(host, port, address)
    else:  # tls://, ws://...: the scheduler's security settings are the client's to use
        reach(host, port, address, "Dask scheduler").close()
    return address


def _frame(kind: int, flags: int, payload: bytes) -> bytes:
    """One HTTP/2 frame on stream 1 (RFC 9113, 4.1)."""
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + b"\x00\x00\x00\x01" \
        + payload


def _literal(name: str, value: str) -> bytes:
    """An HPACK header field, literal without indexing, no Huffman (RFC 7541, 6.2.2)."""
    n, v = name.encode(), value.encode()
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v


def _grpc_call(authority: str) -> bytes:
    """HEADERS and DATA of one unary gRPC call of :data:`_GCS_CALL` with an empty message."""
    fields = b"".join(_literal(k, v) for k, v in (
        (":method", "POST"), (":scheme", "http"), (":path", _GCS_CALL),
        (":authority", authority), ("content-type", "application/grpc"), ("te", "trailers")))
    return _frame(1, 0x4, fields) + _frame(0, 0x1, b"\x00" * 5)  # END_HEADERS; END_STREAM


def _frames(data: bytes):
    """The complete frames at the start of ``data``: (type, flags, stream, payload)."""
    at = 0
    while at + 9 <= len(data):
        size = int.from_bytes(data[at:at + 3], "big")
        if at + 9 + size > len(data):
            return
        stream = int.from_bytes(data[at + 5:at + 9], "big") & 0x7FFFFFFF
        yield data[at + 3], data[at + 4], stream, data[at + 9:at + 9 + size]
        at += 9 + size


def _grpc_status(data: bytes) -> tuple[bool, int | None]:
    """(an HTTP/2 server, the call's gRPC status if its reply is in ``data`` and legible)."""
    frames = list(_frames(data))
    if not frames:
        return False, None
    http2 = frames[0][0] == 4 and frames[0][2] == 0  # a server starts with SETTINGS
    headers = b"".join(p for kind, _, stream, p in frames if stream == 1 and kind in (1, 9))
    found = _STATUS.search(headers)
    if not http2 or found is None:
        return http2, None
    value = headers[found.end():found.end() + found.group(1)[0]]
    return http2, int(value) if value.isdigit() else None


def probe_ray(host: str, port: int, address: str, *, gcs: bool = True,
              timeout: float | None = None) -> None:
    """Refuse ``address`` unless a Ray head (``gcs``) or Ray Client server answers there.

    Examples
    --------
    >>> with socket.socket() as silent:  # the kernel accepts; nothing ever answers
    ...     silent.bind(("127.0.0.1", 0))
    ...     silent.listen()
    ...     probe_ray("127.0.0.1", silent.getsockname()[1], "head:6379", timeout=0.2)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: address must be a Ray head that answers within 0.2 s \
(it accepted the connection and said nothing: a wrong port or another service?); got \
'head:6379'
    """
    timeout = connect_timeout() if timeout is None else timeout
    data = b""
    with reach(host, port, address, "Ray head", timeout) as conn:
        deadline = time.monotonic() + timeout
        try:
            conn.sendall(_PREFACE + (_grpc_call(f"{host}:{port}") if gcs else b""))
            while (left := deadline - time.monotonic()) > 0:
                conn.settimeout(left)
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
                if len(data) >= 9 and data[3:4] + data[5:9] != b"\x04\0\0\0\0":
                    break  # its first frame is not a server's SETTINGS: not HTTP/2
                http2, status = _grpc_status(data)
                if (http2 and not gcs) or status is not None:
                    break
        except OSError:  # a timeout or a reset: judged on what came before
            pass
    http2, status = _grpc_status(data)
    if not data:
        raise fail("address", f"be a Ray head that answers within {timeout:g} s (it "
                   "accepted the connection and said nothing: a wrong port or another "
                   "service?)", address)
    if not http2:
        raise fail("address", "be a Ray head (it answered, but not as Ray's gRPC server "
                   "does: a Dask scheduler or another service?)", address)
    if status == 16 and os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        raise fail("address", f"be a Ray head this process may join: it requires token "
                   f"authentication; {TOKEN_HINT}", address)


def reach(host: str, port: int, address: str, what: str,
          timeout: float | None = None) -> socket.socket:
    """A TCP connection to ``host:port``, or the refusal of ``address`` (``what`` is not
    reachable).

    Examples
    --------
    >>> reach("127.0.0.1", 1, "tcp://127.0.0.1:1", "Dask scheduler")
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: address must be a reachable Dask scheduler (Connection \
refused); got 'tcp://127.0.0.1:1'
    """
    timeout = connect_timeout() if timeout is None else timeout
    try:
        return socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        reason = f"no answer within {timeout:g} s"
    except OSError as exc:
        reason = exc.strerror or str(exc)
    raise fail("address", f"be a reachable {what} ({reason})", address) from None


async def _identity(address: str, timeout: float) -> object:
    from distributed.comm import connect

    comm = await connect(address, timeout=timeout)
    try:
        await comm.write({"op": "identity"})
        return await comm.read()
    finally:
        comm.abort()


def probe_dask(host: str, port: int, address: str, timeout: float | None = None) -> None:
    """Refuse ``address`` unless a Dask scheduler answers its ``identity`` call there.

    The call runs in a thread of its own: its event loop must not meet one already
    running in this one (a notebook's).

    Examples
    --------
    >>> probe_dask("127.0.0.1", 1, "tcp://127.0.0.1:1")
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: address must be a reachable Dask scheduler (Connection \
refused); got 'tcp://127.0.0.1:1'
    """
    timeout = connect_timeout() if timeout is None else timeout
    # a scheduler speaks first: the 8-byte little-endian size of its handshake. Read
    # here, so that Dask's client meets only what looks like Dask (it misread an SSH
    # banner as 2.8 EiB to come, and left its socket open on failing)
    greeting = b""
    with reach(host, port, address, "Dask scheduler", timeout) as conn:
        deadline = time.monotonic() + timeout
        try:
            while len(greeting) < 8 and (left := deadline - time.monotonic()) > 0:
                conn.settimeout(left)
                if not (chunk := conn.recv(8 - len(greeting))):
                    break
                greeting += chunk
        except OSError:  # a timeout or a reset: judged on what came before
            pass
    if not greeting:
        raise fail("address", f"be a Dask scheduler that answers within {timeout:g} s "
                   "(it accepted the connection and said nothing: a wrong port, a Ray head "
                   "or another service?)", address)
    if len(greeting) < 8 or int.from_bytes(greeting, "little") > _GREETING_MAX:
        raise fail("address", "be a Dask scheduler (it answered, but not as one: another "
                   "service?)", address)

    _identify(f"tcp://{host}:{port}", address, timeout)


def probe_inproc(address: str, timeout: float | None = None) -> None:
    """Refuse an ``inproc://`` ``address`` unless a Dask scheduler of this process
    listens there (no TCP: Dask's client would wait out its whole timeout for an
    in-process address that nothing listens on).

    Examples
    --------
    >>> probe_inproc("inproc://192.0.2.1/1/1")  # another process's (pid 1)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: address must be the inproc:// address of a Dask \
scheduler running in this process (an in-process address reaches nothing else); got \
'inproc://192.0.2.1/1/1'
    """
    from distributed.comm.inproc import global_manager

    try:  # listeners are kept as host/pid/n; another host's or pid's: ValueError
        listening = global_manager.get_listener_for(address.split("://", 1)[1]) is not None
    except ValueError:
        listening = False
    if not listening:
        raise fail("address", "be the inproc:// address of a Dask scheduler running in this "
                   "process (an in-process address reaches nothing else)", address)
    _identify(address, address, connect_timeout() if timeout is None else timeout)


def _identify(comm_address: str, address: str, timeout: float) -> None:
    """Refuse ``address`` unless its ``identity`` call answers as a Dask scheduler."""

    def identity() -> object:
        return asyncio.run(asyncio.wait_for(_identity(comm_address, timeout), timeout))

    with ThreadPoolExecutor(1) as thread:
        try:
            info = thread.submit(identity).result()
        except (TimeoutError, asyncio.TimeoutError):
            raise fail("address", f"be a Dask scheduler that answers its identity call "
                       f"within {timeout:g} s", address) from None
        except Exception:  # closed by the other end, or its bytes misread
            raise fail("address", "be a Dask scheduler (it answered, but not as one: "
                       "another service?)", address) from None
    if not (isinstance(info, dict) and info.get("type") == "Scheduler"):
        raise fail("address", "be a Dask scheduler (it answered as something else)",
                   address)
