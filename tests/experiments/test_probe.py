"""The address probes of dpol sweep against stand-in servers: silent, talking another
protocol, and replaying what a Ray head with token authentication answers."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from dpol.errors import InvalidInputError
from dpol.experiments.sweeps.engines import check_address
from dpol.experiments.sweeps.engines.probe import CONNECT_TIMEOUT, connect_timeout

#: the first bytes a Ray 2.60 head started by `ray start --head` (token authentication
#: on) sent to the probe: its SETTINGS frame, then the call's trailers-only reply with
#: grpc-status 16 (UNAUTHENTICATED)
TOKEN_REPLY = (
    b"\x00\x00\x18\x04\x00\x00\x00\x00\x00"
    b"\x00\x04\x00@\x00\x00\x00\x05\x00@\x00\x00\x00\x06\x00\x00@\x00\xfe\x03\x00\x00\x00\x01"
    b"\x00\x00\x7d\x01\x05\x00\x00\x00\x01"
    b"\x88@\x0ccontent-type\x10application/grpc\x00\x0bgrpc-status\x0216\x00\x0cgrpc-message"
    b">InvalidAuthToken: Authentication token is missing or incorrect")
#: what an SSH server says first: a service that is neither Ray nor Dask
SSH = b"SSH-2.0-OpenSSH_9.6\r\n"


@pytest.fixture
def server():
    """A listening socket on a free port that sends ``reply`` to each connection and then
    stays silent (``None``: accepts and never answers, as a held connection does)."""
    sockets = []

    def start(reply: bytes | None) -> int:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        sockets.append(listener)

        def serve() -> None:
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:  # closed at the end of the test
                    return
                sockets.append(conn)
                if reply:
                    conn.sendall(reply)

        threading.Thread(target=serve, daemon=True).start()
        return listener.getsockname()[1]

    yield start
    for s in sockets:
        s.close()


def test_a_token_head_is_named_with_what_to_set(server, monkeypatch):
    port = server(TOKEN_REPLY)
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    with pytest.raises(InvalidInputError, match="requires token authentication; set "
                       "RAY_AUTH_MODE=token"):
        check_address("ray", f"127.0.0.1:{port}")
    monkeypatch.setenv("RAY_AUTH_MODE", "token")  # then Ray's client sends the token
    assert check_address("ray", f"127.0.0.1:{port}") == f"127.0.0.1:{port}"


@pytest.mark.parametrize(("backend", "scheme", "named"), [
    ("ray", "", "be a Ray head (it answered, but not as Ray's gRPC server does"),
    ("dask", "tcp://", "be a Dask scheduler (it answered, but not as one"),
])
def test_another_service_is_refused_within_the_timeout(server, monkeypatch, backend,
                                                        scheme, named):
    monkeypatch.setenv("DPOL_CONNECT_TIMEOUT", "0.5")
    port = server(SSH)
    start = time.monotonic()
    with pytest.raises(InvalidInputError, match=named.replace("(", r"\(")):
        check_address(backend, f"{scheme}127.0.0.1:{port}")
    # the timeout, plus a loaded machine's scheduling (Ray's client waited 20 s and more)
    assert time.monotonic() - start < 0.5 + 3


def test_the_timeout_is_a_number_of_seconds(monkeypatch):
    monkeypatch.delenv("DPOL_CONNECT_TIMEOUT", raising=False)
    assert connect_timeout() == CONNECT_TIMEOUT
    for bad in ("soon", "0", "-1", "inf", "nan"):
        monkeypatch.setenv("DPOL_CONNECT_TIMEOUT", bad)
        with pytest.raises(InvalidInputError, match="DPOL_CONNECT_TIMEOUT must be a number "
                           f"of seconds > 0; got '{bad}'"):
            connect_timeout()


def test_an_inproc_address_must_be_a_scheduler_of_this_process():
    inproc = pytest.importorskip("distributed.comm.inproc")
    # nothing listens on a fresh address of this process (Dask's client waited out its
    # whole timeout on one); pid 1's is another process's. A scheduler of this process
    # passes: tests/experiments/test_training_train.py trains on in-process clusters
    for address in (inproc.new_address(), "inproc://192.0.2.1/1/1"):
        start = time.monotonic()
        with pytest.raises(InvalidInputError, match="address must be the inproc:// address "
                           "of a Dask scheduler running in this process"):
            check_address("dask", address)
        assert time.monotonic() - start < 1  # no connection is tried
