"""A sweep on a Dask scheduler behind mutual TLS (loopback): same records as a local sweep."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
from pathlib import Path

import distributed
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from edgesim import sweeps as sw
from edgesim.cli import main
from tests.helpers import write

SWEEP = """\
[data]
source = "synthetic"
samples = 120
[model]
kind = "ridge"
[agents]
count = 3
[mechanism]
kind = "ffl"
phase1_rounds = 20
phase2_rounds = 2
exact_vcg = false
[output]
local_baseline = false
[sweep]
seed = [0, 1]
"mechanism.kind" = ["fedavg", "ffl"]
"""


def _pem(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _cert(subject: str, key, issuer: str, signer, ca: bool) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        alt = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(alt), critical=False)
    return builder.sign(signer, hashes.SHA256())


def make_pki(folder: Path, name: str) -> dict[str, str]:
    """Write a self-signed CA and one certificate and key it signed; return their paths."""
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _cert(f"{name} CA", ca_key, f"{name} CA", ca_key, ca=True)
    cert = _cert(f"{name} node", key, f"{name} CA", ca_key, ca=False)
    paths = {"ca": folder / f"{name}-ca.pem", "cert": folder / f"{name}.pem"}
    paths["key"] = folder / f"{name}-key.pem"
    paths["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths["key"].write_bytes(_pem(key))
    return {k: str(v) for k, v in paths.items()}


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    """A loopback Dask cluster whose scheduler, worker and clients must all speak mutual TLS."""
    folder = tmp_path_factory.mktemp("pki")
    pki = make_pki(folder, "cluster")
    security = distributed.Security(
        tls_ca_file=pki["ca"],
        tls_scheduler_cert=pki["cert"],
        tls_scheduler_key=pki["key"],
        tls_worker_cert=pki["cert"],
        tls_worker_key=pki["key"],
        tls_client_cert=pki["cert"],
        tls_client_key=pki["key"],
        require_encryption=True,
    )
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tls://",
        host="127.0.0.1",
        security=security,
        dashboard_address=None,
    ) as cluster:
        yield cluster.scheduler_address, pki, folder


def _records(folder: Path) -> dict[str, tuple]:
    """Return run_id -> (index, values, status, the run's JSON text) from results.jsonl."""
    out = {}
    for line in (folder / sw.RESULTS).read_text().splitlines():
        r = json.loads(line)
        out[r["run_id"]] = (r["index"], r["values"], r["status"], sw.result_json(r))
    return out


def _tls_flags(pki: dict[str, str]) -> list[str]:
    return [
        "--dask-tls-ca",
        pki["ca"],
        "--dask-tls-cert",
        pki["cert"],
        "--dask-tls-key",
        pki["key"],
    ]


def test_sweep_over_tls_gives_the_local_sweeps_records(tmp_path, tls_cluster, capsys):
    address, pki, _ = tls_cluster
    assert address.startswith("tls://127.0.0.1:")
    scenario = write(tmp_path, SWEEP)
    local, remote = tmp_path / "local", tmp_path / "tls"
    assert main(["sweep", str(scenario), "-o", str(local), "--workers", "2", "--quiet"]) == 0
    argv = ["sweep", str(scenario), "-o", str(remote), "--scheduler", address, *_tls_flags(pki)]
    assert main([*argv, "--quiet"]) == 0
    assert _records(remote) == _records(local)
    assert len(_records(local)) == 4
    assert all(rec[2] == "ok" for rec in _records(local).values())
    manifest = json.loads((remote / sw.MANIFEST).read_text())
    assert manifest["sessions"][-1]["executor"].startswith(f"dask {address} (2 threads)")


def test_scheduler_refuses_clients_without_a_certificate_it_trusts(tls_cluster):
    address, pki, folder = tls_cluster
    stranger = make_pki(folder, "stranger")  # a valid certificate from another CA
    with pytest.raises(sw.SweepError, match="cannot connect"):
        sw.make_executor(
            scheduler=address,
            timeout_s=2,
            security=sw.dask_security(address, pki["ca"], stranger["cert"], stranger["key"]),
        )
    no_tls = distributed.Security()  # plain TCP to the TLS port
    with pytest.raises(sw.SweepError, match="cannot connect"):
        sw.make_executor(
            scheduler=address.replace("tls://", "tcp://"), timeout_s=2, security=no_tls
        )
    handle = sw.make_executor(
        scheduler=address, security=sw.dask_security(address, pki["ca"], pki["cert"], pki["key"])
    )
    try:
        assert handle.label == f"dask {address} (2 threads)"
    finally:
        handle.close()


def test_tls_flags_bad_input_exits_2_naming_the_flag(tmp_path, capsys):
    pki = make_pki(tmp_path, "x")
    scenario = str(write(tmp_path, SWEEP))
    out = str(tmp_path / "out")
    cases = [
        (["--dask-tls-ca", pki["ca"]], "--dask-tls-ca: is read only with --scheduler"),
        (
            ["--scheduler", "tcp://127.0.0.1:1", *_tls_flags(pki)],
            "--scheduler: 'tcp://127.0.0.1:1': with --dask-tls-* the address starts with tls://",
        ),
        (
            ["--scheduler", "tls://127.0.0.1:1", "--dask-tls-ca", pki["ca"]],
            "--dask-tls-cert: is needed for a TLS scheduler",
        ),
        (
            ["--scheduler", "tls://127.0.0.1:1", *_tls_flags({**pki, "key": "no.pem"})],
            "--dask-tls-key: 'no.pem' is not a file",
        ),
    ]
    for extra, message in cases:
        assert main(["sweep", scenario, "-o", out, "--quiet", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"edgesim: error: {message}"), err
        assert not Path(out).exists()
