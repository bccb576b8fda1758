"""The cluster recipes in infra/: what they would start binds explicit addresses, speaks TLS,
and keeps numba to one thread per single-threaded worker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.test_cluster import _make_certificates

INFRA = Path(__file__).resolve().parents[1] / "infra"


def test_the_slurm_recipe_writes_a_tls_job_of_single_threaded_workers(tmp_path):
    files = _make_certificates(tmp_path)
    done = subprocess.run(
        [sys.executable, str(INFRA / "slurm" / "dask_slurm.py"), "--host", "127.0.0.1",
         "--port", "0", "--cores", "4", "--memory", "8GB", "--interface", "lo",
         "--partition", "compute", "--tls-ca", str(files["ca"]), "--tls-cert", str(files["cert"]),
         "--tls-key", str(files["key"]), "--dry-run"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    script = done.stdout
    assert "#SBATCH -p compute" in script and "#SBATCH --cpus-per-task=4" in script
    assert "export NUMBA_NUM_THREADS=1" in script
    worker = next(line for line in script.splitlines() if "dask_worker" in line).split()
    assert worker[worker.index("distributed.cli.dask_worker") + 1].startswith("tls://127.0.0.1:")
    expected = {
        "--nthreads": "1",
        "--nworkers": "4",
        "--interface": "lo",
        "--dashboard-address": "127.0.0.1:0",
        "--tls-ca-file": str(files["ca"]),
    }
    for flag, value in expected.items():
        assert worker[worker.index(flag) + 1] == value, flag


def _containers(document: dict) -> list[dict]:
    spec = document["spec"]
    if document["kind"] == "DaskCluster":
        return [*spec["worker"]["spec"]["containers"], *spec["scheduler"]["spec"]["containers"]]
    return spec["template"]["spec"]["containers"]


def _after(args: list[str], flag: str) -> str:
    return str(args[args.index(flag) + 1])


def test_the_kubernetes_recipe_binds_pod_addresses_and_speaks_tls():
    cluster = yaml.safe_load((INFRA / "kubernetes" / "dask-cluster.yaml").read_text())
    worker, scheduler = _containers(cluster)
    for container in (worker, scheduler):
        args = container["args"]
        assert _after(args, "--host") == "$(POD_IP)"  # the pod's own address, not 0.0.0.0
        assert _after(args, "--dashboard-address").startswith("127.0.0.1:")
        assert {"--tls-ca-file", "--tls-cert", "--tls-key"} <= set(args)
    assert _after(scheduler["args"], "--protocol") == "tls"
    assert worker["args"][1].startswith("tls://") and _after(worker["args"], "--nthreads") == "1"
    env = {e["name"]: e.get("value") for e in worker["env"]}
    assert env["NUMBA_NUM_THREADS"] == "1"
    assert cluster["spec"]["scheduler"]["service"]["type"] == "ClusterIP"
    job = yaml.safe_load((INFRA / "kubernetes" / "run-job.yaml").read_text())
    (run,) = _containers(job)
    assert _after(run["args"], "--dask-address").startswith("tls://gameforge-scheduler:")
    assert {e["name"] for e in run["env"]} >= {"GAMEFORGE_TLS_CA_FILE", "GAMEFORGE_TLS_CERT"}
