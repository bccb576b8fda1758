"""A real Dask cluster on 127.0.0.1 (scheduler + two worker processes) gives the same artifact."""

from __future__ import annotations

from pathlib import Path

import pytest

from gameforge.artifacts import ArtifactStore
from gameforge.flows.runtime import LOOPBACK_ANY_PORT, TLS_ENV, ClusterError, dask_executor
from gameforge.stages.executor import DaskExecutor
from gameforge.stages.runner import run_stage
from tests.cluster_helpers import start_cluster, stop_all

PARAMS = {"game": "holdem6.limit.2p.reverse_blinds", "boards_per_chunk": 128}


def _same_artifact_as_in_process(tmp_path: Path, address: str) -> None:
    on_cluster = ArtifactStore(tmp_path / "cluster")
    with dask_executor(address) as executor:
        assert isinstance(executor, DaskExecutor)
        executor.client.wait_for_workers(2, timeout=60)
        remote = run_stage(
            "river-hs", PARAMS, store=on_cluster, executor=executor, log=lambda _m: None
        )
    local = ArtifactStore(tmp_path / "local")
    here = run_stage("river-hs", PARAMS, store=local, log=lambda _m: None)
    assert remote.key == here.key
    a = on_cluster.open(remote.key)
    b = local.open(here.key)
    assert a.meta["arrays"] == b.meta["arrays"]  # shapes, dtypes and checksums
    assert a["hs_count"][:].tobytes() == b["hs_count"][:].tobytes()


@pytest.mark.cluster
def test_stage_through_real_cluster_equals_in_process(tmp_path):
    address, procs = start_cluster(tmp_path)
    try:
        _same_artifact_as_in_process(tmp_path, address)
        logs = tmp_path / "logs"
        worker_logs = "".join((logs / f"worker{i}.log").read_text() for i in range(2))
        assert "Starting established connection" in worker_logs or "Registered to" in worker_logs
    finally:
        stop_all(procs)


def _make_certificates(directory: Path) -> dict[str, Path]:
    """A throwaway CA and one certificate it signs for 127.0.0.1, as PEM files."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gameforge test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files = {
        "ca": directory / "ca.pem",
        "cert": directory / "node.pem",
        "key": directory / "key.pem",
    }
    files["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files["key"].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


@pytest.mark.cluster
def test_stage_through_a_tls_cluster_equals_in_process(tmp_path, monkeypatch):
    """tls://: certificates from GAMEFORGE_TLS_*; without them, one line before connecting."""
    files = _make_certificates(tmp_path)
    tls = ["--tls-ca-file", str(files["ca"]), "--tls-cert", str(files["cert"])]
    tls += ["--tls-key", str(files["key"])]
    address, procs = start_cluster(tmp_path, "tls", tls)
    try:
        for env in TLS_ENV.values():
            monkeypatch.delenv(env, raising=False)
        with pytest.raises(ClusterError, match="GAMEFORGE_TLS_CA_FILE"), dask_executor(address):
            pass
        monkeypatch.setenv("GAMEFORGE_TLS_CA_FILE", str(files["ca"]))
        monkeypatch.setenv("GAMEFORGE_TLS_CERT", str(files["cert"]))
        monkeypatch.setenv("GAMEFORGE_TLS_KEY", str(files["key"]))
        _same_artifact_as_in_process(tmp_path, address)
    finally:
        stop_all(procs)


class _Bar:
    """A progress bar that records its total and every advance."""

    def __init__(self) -> None:
        self.total = 0
        self.steps: list[int] = []

    def start(self, desc: str, total: int, done: int = 0) -> _Bar:
        self.total = total
        return self

    def advance(self, n: int = 1) -> None:
        self.steps.append(n)

    def close(self) -> None:
        pass

    def note(self, text: str) -> None:
        pass


def test_executors_count_progress_by_work_weights():
    """Chunks of unequal work: the bar's total is the work, each finished chunk adds its own
    weight (in-process and through Dask), and results still come back in item order."""
    from distributed import Client

    from gameforge.stages.executor import InProcessExecutor

    items = [(i,) for i in range(5)]
    weights = [3, 1, 4, 1, 5]
    in_process = _Bar()
    assert InProcessExecutor().map(abs, items, progress=in_process, weights=weights) == [
        0, 1, 2, 3, 4
    ]  # fmt: skip
    assert in_process.total == 14 and in_process.steps == weights
    # dashboard_address=None would bind port 8787 on every interface (flows/runtime.py)
    loopback = {
        "dashboard_address": LOOPBACK_ANY_PORT,
        "worker_dashboard_address": LOOPBACK_ANY_PORT,
    }
    with Client(processes=False, n_workers=1, threads_per_worker=2, **loopback) as c:
        bar = _Bar()
        assert DaskExecutor(c).map(abs, items, progress=bar, weights=weights) == [0, 1, 2, 3, 4]
    assert bar.total == 14 and sorted(bar.steps) == sorted(weights)
    plain = _Bar()
    InProcessExecutor().map(abs, items, progress=plain)
    assert plain.total == 5 and plain.steps == [1] * 5
