"""GnuPG suite (harness/abh/suites/gnupg.py): parsing of recorded gpg output, settings.

Fixtures in tests/fixtures/gnupg/ are real output of gpg 2.4.7 (trixie dev image) and
gpg 2.2.40 (bookworm host); their README.txt gives the commands. Process running is
simulated with a fake gpg runner that answers with those recorded texts.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from abh.suites import gnupg as G
from abh.suites import gnupg_keys as GK
from abh.suites import gnupg_output as GO
from abh.suites.common import CommandResult, SuiteError
from helpers import REPO

FIXTURES = REPO / "tests" / "fixtures" / "gnupg"
TRIXIE = "gpg2.4.7-trixie"
BOOKWORM = "gpg2.2.40-bookworm"

# Fingerprints as recorded in colons-secret-keys-gpg2.4.7-trixie.txt.
T_PRIMARY = "77206957FECEC3EA8D44893BB471C5536269B6E6"
T_RSA2048 = "188D6CE98D142189E99530F6EDECED6F013D078B"
T_RSA4096 = "EEA90D79FC06A284BCFD289810075B22E5CB3126"
T_CV25519 = "FA53771CADA79243443523514BCD764D114A8054"
T_P256 = "1431F6AA44BD602B4AD725E42CAD1D8D3CF29BAE"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# ------------------------------------------------------------------ gpg --version


@pytest.mark.parametrize(
    ("tag", "line", "version", "libgcrypt"),
    [
        (TRIXIE, "gpg (GnuPG) 2.4.7", (2, 4, 7), "libgcrypt 1.11.0"),
        (BOOKWORM, "gpg (GnuPG) 2.2.40", (2, 2, 40), "libgcrypt 1.10.1"),
    ],
)
def test_parse_gpg_version_recorded(
    tag: str, line: str, version: tuple[int, int, int], libgcrypt: str
) -> None:
    parsed = GO.parse_gpg_version(fixture(f"gpg-version-{tag}.txt"))
    assert parsed.gpg_line == line
    assert parsed.version == version
    assert parsed.libgcrypt_line == libgcrypt
    assert parsed.tool_text == f"{line}; {libgcrypt}"


def test_parse_gpg_version_refuses_old_and_foreign_output() -> None:
    recorded = fixture(f"gpg-version-{BOOKWORM}.txt")
    old = recorded.replace("gpg (GnuPG) 2.2.40", "gpg (GnuPG) 2.0.22", 1)
    with pytest.raises(SuiteError, match=r"2\.0\.22 is too old; the suite needs GnuPG 2\.2\.0"):
        GO.parse_gpg_version(old)
    with pytest.raises(SuiteError, match="unexpected `gpg --version` output"):
        GO.parse_gpg_version("sq 0.40.0 (sequoia-openpgp 1.21.2)\n")
    with pytest.raises(SuiteError, match="first line ''"):
        GO.parse_gpg_version("")


def test_parse_gpg_version_without_libgcrypt_line() -> None:
    first_line_only = fixture(f"gpg-version-{TRIXIE}.txt").splitlines()[0]
    parsed = GO.parse_gpg_version(first_line_only)
    assert parsed.libgcrypt_line is None
    assert parsed.tool_text == "gpg (GnuPG) 2.4.7"


# ------------------------------------------------------------------ status lines


@pytest.mark.parametrize(
    ("tag", "fpr"),
    [(TRIXIE, T_RSA2048), (BOOKWORM, "6353D39B956C049498FAE930BD443AE3A6C5AE10")],
)
def test_parse_key_created_recorded(tag: str, fpr: str) -> None:
    status = fixture(f"status-quick-add-key-rsa2048-{tag}.txt")
    assert GO.parse_key_created(status) == fpr
    assert GO.parse_key_created(status, kinds="P") is None  # a subkey, not a primary key


@pytest.mark.parametrize("tag", [TRIXIE, BOOKWORM])
def test_parse_key_created_absent_after_failure(tag: str) -> None:
    assert GO.parse_key_created(fixture(f"status-quick-add-key-cv448-fail-{tag}.txt")) is None


def test_parse_status_keeps_only_status_lines() -> None:
    parsed = GO.parse_status(fixture(f"status-quick-add-key-cv448-fail-{TRIXIE}.txt"))
    assert [kw for kw, _ in parsed] == [
        "KEY_CONSIDERED",
        "ERROR",
        "KEY_NOT_CREATED",
        "FAILURE",
    ]
    assert parsed[1] == ("ERROR", ["key_generate", "33554436"])
    assert GO.parse_status("gpg: keybox created\n[GNUPG:] \n") == []


@pytest.mark.parametrize("tag", [TRIXIE, BOOKWORM])
def test_parse_decryption_status_recorded(tag: str) -> None:
    status = GO.parse_decryption_status(fixture(f"status-decrypt-cv25519-{tag}.txt"))
    assert status.okay
    assert status.mdc_method == 2
    assert status.sym_algo == 9
    assert status.aead_algo == 0
    assert status.plaintext_length == 4096
    assert status.as_extra() == {
        "mdc_method": 2,
        "sym_algo": 9,
        "cipher": "AES256",
        "aead_algo": 0,
        "aead": "none",
    }
    # The decrypting subkey is the cv25519 subkey of the same session's key listing.
    records = GO.parse_colon_keys(fixture(f"colons-secret-keys-{tag}.txt"))
    cv = next(r for r in records if r.curve == "cv25519")
    assert status.key_fingerprint == cv.fingerprint


def test_parse_decryption_status_failure_recorded() -> None:
    status = GO.parse_decryption_status(fixture(f"status-decrypt-no-seckey-{TRIXIE}.txt"))
    assert not status.okay
    assert status.key_fingerprint is None
    assert status.sym_algo is None
    assert status.plaintext_length is None


# ------------------------------------------------------------------ colon listing


def test_parse_colon_keys_trixie() -> None:
    records = GO.parse_colon_keys(fixture(f"colons-secret-keys-{TRIXIE}.txt"))
    assert [(r.record, r.fingerprint, r.pubkey_algo, r.bits, r.curve) for r in records] == [
        ("sec", T_PRIMARY, 22, 255, "ed25519"),
        ("ssb", T_RSA2048, 1, 2048, None),
        ("ssb", T_RSA4096, 1, 4096, None),
        ("ssb", T_CV25519, 18, 255, "cv25519"),
        ("ssb", T_P256, 18, 256, "nistp256"),
    ]
    assert records[0].capabilities == "cEC"
    assert records[1].keyid == "EDECED6F013D078B"
    assert {r.token for r in records} == {"+"}
    assert {r.capabilities for r in records[1:]} == {"e"}


def test_parse_colon_keys_bookworm_matches_trixie_shape() -> None:
    records = GO.parse_colon_keys(fixture(f"colons-secret-keys-{BOOKWORM}.txt"))
    assert [(r.record, r.pubkey_algo, r.bits, r.curve) for r in records] == [
        ("sec", 22, 255, "ed25519"),
        ("ssb", 1, 2048, None),
        ("ssb", 1, 4096, None),
        ("ssb", 18, 255, "cv25519"),
        ("ssb", 18, 256, "nistp256"),
    ]
    assert records[3].fingerprint == "2B3FC6B1F980FB82E9873CBA925B08AC1B4AE353"


def test_parse_colon_keys_bad_record() -> None:
    with pytest.raises(SuiteError, match="bad key record"):
        GO.parse_colon_keys("ssb:u:many:1:EDECED6F013D078B:1795998390::::::e:::+:::23:\n")


def test_check_subkey_against_recorded_listing() -> None:
    by_fpr = {
        r.fingerprint: r for r in GO.parse_colon_keys(fixture(f"colons-secret-keys-{TRIXIE}.txt"))
    }
    algos = GK.ALGORITHMS
    assert GK.check_subkey(algos["rsa2048"], by_fpr[T_RSA2048]) is None
    assert GK.check_subkey(algos["rsa4096"], by_fpr[T_RSA4096]) is None
    assert GK.check_subkey(algos["cv25519"], by_fpr[T_CV25519]) is None
    assert GK.check_subkey(algos["nistp256"], by_fpr[T_P256]) is None
    wrong_bits = GK.check_subkey(algos["rsa4096"], by_fpr[T_RSA2048])
    assert wrong_bits == "rsa4096: subkey has algo 1, 2048 bits, curve None, expected 4096 bits"
    wrong_curve = GK.check_subkey(algos["cv25519"], by_fpr[T_P256])
    assert wrong_curve is not None and wrong_curve.endswith("expected curve cv25519")
    wrong_algo = GK.check_subkey(algos["cv25519"], by_fpr[T_PRIMARY])
    assert wrong_algo is not None and wrong_algo.endswith("expected algo 18")
    assert GK.check_subkey(algos["rsa2048"], None) == (
        "rsa2048: the new subkey is missing from the key listing"
    )


# ------------------------------------------------------------------ settings


def test_normalize_config_defaults() -> None:
    assert G.normalize_config({}) == {
        "device": "cpu",
        "algorithms": ["rsa2048", "rsa4096", "cv25519"],
        "file_bytes": 1048576,
        "runs": 5,
        "compress": False,
        "timeout_s": 300.0,
    }
    cfg = G.normalize_config({"algorithms": ["nistp384"], "runs": 3, "timeout_s": 20})
    assert cfg["algorithms"] == ["nistp384"]
    assert cfg["runs"] == 3
    assert cfg["timeout_s"] == 20.0


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"iterations": 3}, "unknown setting.s. iterations; allowed: device, algorithms"),
        ({"device": "yubikey"}, "device='yubikey' is not available; only 'cpu' exists"),
        ({"algorithms": []}, "expected a non-empty list of: rsa2048, rsa3072"),
        ({"algorithms": "rsa2048"}, "algorithms='rsa2048'; expected a non-empty list"),
        ({"algorithms": ["cv448"]}, "algorithms has 'cv448'; allowed: rsa2048"),
        ({"algorithms": ["rsa2048", "rsa2048"]}, "names an algorithm twice"),
        ({"file_bytes": 0}, "file_bytes=0; expected an integer from 1 to 1073741824"),
        ({"file_bytes": 1.5}, "file_bytes=1.5; expected an integer"),
        ({"runs": True}, "runs=True; expected an integer from 1 to 10000"),
        ({"compress": "yes"}, "compress='yes'; expected true or false"),
        ({"timeout_s": 0}, "timeout_s=0; expected seconds > 0"),
        ({"timeout_s": False}, "timeout_s=False; expected seconds"),
    ],
)
def test_normalize_config_errors(config: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        G.normalize_config(config)


def test_device_error_says_where_a_token_plugs_in() -> None:
    with pytest.raises(SuiteError) as info:
        G.normalize_config({"device": "nitrokey"})
    assert "abh.suites.gnupg_keys.DEVICES" in str(info.value)
    assert "docs/suites-gnupg.md" in str(info.value)
    assert set(GK.DEVICES) == {"cpu"}
    assert GK.DEVICES["cpu"]().name == "cpu"


# ------------------------------------------------------------------ fake gpg


class FakeGpg:
    """Answers gpg calls with recorded texts; each call takes (n + 1) ms."""

    def __init__(self, plaintext: bytes, tag: str = TRIXIE) -> None:
        self.plaintext = plaintext
        self.tag = tag
        self.calls: list[list[str]] = []
        self.fail_encrypt = False
        self.fail_timed_run: int | None = None  # 1-based index of the timed run that fails
        self.corrupt_output = False
        self.add_key_status: dict[str, tuple[int, str, str]] = {}
        self.primary_rc = 0

    def result(self, args: Sequence[str], rc: int, out: str = "", err: str = "") -> CommandResult:
        return CommandResult(tuple(args), rc, out, err, len(self.calls) * 1_000_000)

    def __call__(self, args: Sequence[str]) -> CommandResult:
        self.calls.append(list(args))
        if "--quick-gen-key" in args:
            # Primary fingerprint of the recorded listing, in the status line gpg prints.
            out = f"[GNUPG:] KEY_CREATED P {T_PRIMARY}\n" if self.primary_rc == 0 else ""
            return self.result(args, self.primary_rc, out, "gpg: Key generation failed: boom\n")
        if "--quick-add-key" in args:
            rc, out, err = self.add_key_status[args[args.index("--quick-add-key") + 2]]
            return self.result(args, rc, out, err)
        if "--list-secret-keys" in args:
            return self.result(args, 0, fixture(f"colons-secret-keys-{self.tag}.txt"))
        if "-e" in args:
            if self.fail_encrypt:
                return self.result(args, 2, "", "gpg: F.gpg: encryption failed: No public key\n")
            shutil.copyfile(args[-1], args[args.index("-o") + 1])
            return self.result(args, 0)
        assert "--decrypt" in args
        target = args[args.index("-o") + 1]
        if target == os.devnull:
            timed = sum(1 for c in self.calls if os.devnull in c)
            if timed == self.fail_timed_run:
                return self.result(args, 2, "", "gpg: decryption failed: No secret key\n")
            return self.result(args, 0)
        Path(target).write_bytes(
            b"x" + self.plaintext[1:] if self.corrupt_output else self.plaintext
        )
        return self.result(args, 0, fixture(f"status-decrypt-cv25519-{self.tag}.txt"))


def prepared(fingerprint: str = T_CV25519) -> GK.PreparedKey:
    return GK.PreparedKey(GK.ALGORITHMS["cv25519"], fingerprint, 7_000_000)


def measure(
    fake: FakeGpg, key: GK.PreparedKey, tmp_path: Path, runs: int = 3
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    plain = tmp_path / "plain.bin"
    digest = G.write_random_file(str(plain), 4096)
    fake.plaintext = plain.read_bytes()
    return G.measure_key(
        fake,
        key,
        device="cpu",
        plain_path=str(plain),
        plain_sha256=digest,
        workdir=str(tmp_path),
        file_bytes=4096,
        runs=runs,
        compress=False,
    )


def test_measure_key_success(tmp_path: Path) -> None:
    fake = FakeGpg(b"")
    rows, extra = measure(fake, prepared(), tmp_path)
    keygen, decrypt = rows
    assert (keygen["scheme"], keygen["param"], keygen["operation"]) == (
        "ECDH",
        "Curve25519",
        "key_generation",
    )
    assert keygen["samples_ns"] == [7_000_000]
    assert decrypt["valid"] and decrypt["operation"] == "decrypt"
    # calls: encrypt (1 ms), checked first run (2 ms, discarded), 3 timed runs.
    assert decrypt["samples_ns"] == [3_000_000, 4_000_000, 5_000_000]
    assert decrypt["bytes_per_op"] == 4096 and decrypt["repetitions_requested"] == 3
    assert extra["discarded_first_run_ns"] == 2_000_000
    assert extra["decryption_info"]["cipher"] == "AES256"
    encrypt_call = fake.calls[0]
    assert encrypt_call[encrypt_call.index("-r") + 1] == f"{T_CV25519}!"
    assert encrypt_call[3:5] == ["--compress-algo", "none"]
    assert not (tmp_path / "cv25519.out").exists()


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        ("fail_encrypt", "encryption failed: gpg: F.gpg: encryption failed: No public key"),
        ("corrupt_output", "decrypted output differs from the plaintext (SHA-256 mismatch)"),
        ("other_key", f"decrypted with subkey {T_CV25519}, not {T_P256}"),
        ("fail_timed_run", "timed run 2 failed: gpg: decryption failed: No secret key"),
    ],
)
def test_measure_key_failures_give_invalid_rows(tmp_path: Path, setup: str, reason: str) -> None:
    fake = FakeGpg(b"")
    key = prepared(T_P256 if setup == "other_key" else T_CV25519)
    fake.fail_encrypt = setup == "fail_encrypt"
    fake.corrupt_output = setup == "corrupt_output"
    fake.fail_timed_run = 2 if setup == "fail_timed_run" else None
    rows, extra = measure(fake, key, tmp_path)
    decrypt = rows[-1]
    assert rows[0]["valid"]  # key generation itself worked
    assert not decrypt["valid"]
    assert decrypt["invalid_reason"] == reason
    assert extra["error"] == reason
    if setup == "fail_timed_run":
        assert decrypt["samples_ns"] == [3_000_000, 4_000_000]


def test_measure_key_with_failed_key_generation(tmp_path: Path) -> None:
    key = GK.PreparedKey(GK.ALGORITHMS["rsa4096"], None, 9_000_000, "key generation failed: x")
    fake = FakeGpg(b"")
    rows, extra = measure(fake, key, tmp_path)
    assert len(rows) == 1
    assert rows[0]["operation"] == "key_generation" and rows[0]["key_bits"] == 4096
    assert rows[0]["invalid_reason"] == "key generation failed: x"
    assert extra["error"] == "key generation failed: x"
    assert fake.calls == []


def test_cpu_device_prepare_checks_recorded_listing() -> None:
    fake = FakeGpg(b"")
    rsa_status = fixture(f"status-quick-add-key-rsa2048-{TRIXIE}.txt")
    fake.add_key_status = {
        "rsa2048": (0, rsa_status, ""),
        # gpg said it made a key, but the listing shows that key has 2048 bits.
        "rsa4096": (0, rsa_status, ""),
        "cv25519": (
            2,
            fixture(f"status-quick-add-key-cv448-fail-{TRIXIE}.txt"),
            "gpg: Key generation failed: Invalid public key algorithm\n",
        ),
    }
    specs = [GK.ALGORITHMS[n] for n in ("rsa2048", "rsa4096", "cv25519")]
    keys = GK.CpuDevice().prepare(fake, specs)
    assert [(k.fingerprint, k.error) for k in keys] == [
        (T_RSA2048, None),
        (None, "rsa4096: subkey has algo 1, 2048 bits, curve None, expected 4096 bits"),
        (None, "key generation failed: gpg: Key generation failed: Invalid public key algorithm"),
    ]
    assert fake.calls[0][:4] == ["--pinentry-mode", "loopback", "--passphrase", ""]
    assert fake.calls[1][-4:] == [T_PRIMARY, "rsa2048", "encr", "never"]


def test_cpu_device_primary_failure_is_suite_error() -> None:
    fake = FakeGpg(b"")
    fake.primary_rc = 2
    with pytest.raises(SuiteError, match="cannot create the primary key: gpg: Key generation"):
        GK.CpuDevice().prepare(fake, [GK.ALGORITHMS["rsa2048"]])
