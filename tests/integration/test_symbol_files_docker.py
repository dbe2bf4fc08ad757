"""Debian's stripped libraries named by symbol files, a mismatching one refused (``--run-docker``).

On the CI matrix's amd64 benchmark image (the session's ``slim_amd64_image``) the counting
layer is built as the pipeline builds it, with the symbols image (``nostrip`` rebuilds of
libgcrypt20 and libsodium23 of the installed versions, Debian's ``libc6-dbg``); the layer
is the pipeline's own for ``ci-amd64`` (same content hash), so the counting tests reuse it.
One harness run counts blindsig in a layer over it whose libsodium symbol file has one
code byte flipped: libgcrypt's internal functions are named from its symbol file, libc's
from its debug file by build-id, and libsodium's file is refused, its code named
``(no symbol) after ...`` as without symbol files, each decision recorded with its reason.
"""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path

import docker
import pytest
from abh.suites import count_symbols as S
from helpers import CI_MATRIX, WORK

from archbench import run as pipeline
from archbench.hosts import engine
from archbench.images import (
    COUNTER_IN_IMAGE,
    Builder,
    ImageSpec,
    ensure_counting_image,
    ensure_image,
    resolve_apt_proxy,
)
from archbench.images.builder import digest
from archbench.matrix import load
from archbench.platforms import Arch

pytestmark = [pytest.mark.docker]

FLIP = """# archbench test: the counting layer, libsodium's symbol file's code changed by one byte
FROM {layer}
RUN cd {counter}/symbols \\
 && f=$(ls libsodium.so.23.*) \\
 && objcopy --dump-section .text=/tmp/text.bin "$f" \\
 && python3 -c "import pathlib; p = pathlib.Path('/tmp/text.bin'); b = bytearray(p.read_bytes()); \\
      b[64] ^= 0xFF; p.write_bytes(b)" \\
 && objcopy --update-section .text=/tmp/text.bin "$f" \\
 && rm /tmp/text.bin
"""


def installed_names(client: docker.DockerClient, image: str, path: str) -> set[str]:
    """The function names of ``path``'s own symbol table in ``image`` (its ``.dynsym``)."""
    stream, _ = client.containers.create(image, command=["true"]).get_archive(path)
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        member = tar.getmembers()[0]
        extracted = tar.extractfile(member)
        assert extracted is not None
        elf = S.parse_elf(extracted.read(), path)
    return set(S.symbols_of(elf).names)


def test_internal_functions_named_and_a_mismatching_symbol_file_refused(
    engine_client: docker.DockerClient, slim_amd64_image: str, tmp_path: Path
) -> None:
    client = engine_client
    if engine.engine_arch(client) is not Arch.AMD64:
        pytest.skip("the symbols image is built on an amd64 engine")
    matrix = load(CI_MATRIX)
    builder = Builder(
        client=client,
        work_dir=WORK,
        log_dir=tmp_path / "logs",
        apt_proxy=resolve_apt_proxy(client, "auto"),
    )
    t0 = time.monotonic()
    layer = ensure_counting_image(
        builder,
        slim_amd64_image,
        str(client.images.get(slim_amd64_image).id),
        Arch.AMD64,
        symbols_for=("debian-trixie", matrix.bases["debian-trixie"]),
    )
    print(f"\ncounting layer with symbol files: {time.monotonic() - t0:.0f} s")
    assert layer.symbols_tag.startswith("archbench/symbols:amd64-"), layer.symbols_note
    dockerfile = FLIP.format(layer=layer.tag, counter=COUNTER_IN_IMAGE)
    spec = ImageSpec(
        "archbench/test-symbols-refused",
        Arch.AMD64,
        dockerfile,
        (),
        digest(dockerfile.encode(), layer.image_id.encode()),
    )
    ensure_image(builder, spec, "refused.build.log")

    (plan,) = pipeline.plan(
        matrix,
        matrix.select(["ci-amd64"]),
        {"local": Arch.AMD64},
        metrics=("instructions",),
        suites=["blindsig"],
    )
    doc, _ = pipeline.run_harness(
        client,
        spec.tag,
        Arch.AMD64,
        plan.count_suites or plan.suites,
        extra_args=["--count-with", COUNTER_IN_IMAGE, "--count-cpu", "max"],
    )
    assert doc.counting is not None
    files = doc.counting.symbol_files
    print({lib: (c["status"], c["reason"]) for lib, c in files.items()})
    assert doc.counting.symbol_store["present"] is True
    assert doc.counting.symbol_tables[next(lib for lib in files if "gcrypt" in lib)] == (
        "symbol file"
    )
    by_stem = {lib.split(".so")[0]: (lib, check) for lib, check in files.items()}
    gcrypt, gcrypt_check = by_stem["libgcrypt"]
    sodium, sodium_check = by_stem["libsodium"]
    assert gcrypt_check["status"] == "used" and gcrypt_check["match"] == "code"
    assert gcrypt_check["origin"]["source"] == "libgcrypt20"
    assert sodium_check["status"] == "refused"
    assert "code differs" in str(sodium_check["reason"])
    assert by_stem["libc"][1]["status"] == "used" and by_stem["libc"][1]["match"] == "build-id"

    exported = installed_names(client, slim_amd64_image, f"/usr/lib/x86_64-linux-gnu/{gcrypt}")
    rows = {(r.scheme, r.key_bits, r.operation): r for r in doc.rows if r.valid}
    signing = rows[("CS", None, "signing")]
    assert signing.attribution
    gcrypt_functions = {
        f.function: f.instructions_per_op for f in signing.attribution if f.library == gcrypt
    }
    internal = {f for f in gcrypt_functions if f not in exported and not f.startswith("(")}
    print("CS signing, libgcrypt:", sorted(gcrypt_functions.items(), key=lambda kv: -kv[1])[:8])
    # libgcrypt's internal code (SHA-512 compression, HMAC) has names of its own now...
    assert internal, gcrypt_functions
    # ...its hand-written SHA-2 assembly too, whose symbols have no ELF size (.type without
    # .size: they reach to the next symbol, count_symbols.function_ranges); before that rule
    # 20k of libgcrypt's 63k instructions per CS signature stayed "(no symbol) after ...",
    # now (2026-12-07) 0.3 % of the row is unnamed in all.
    assert any(
        f.startswith(("_gcry_sha512_transform_amd64", "_gcry_sha256_transform_amd64"))
        for f in internal
    ), gcrypt_functions
    unnamed = sum(n for f, n in gcrypt_functions.items() if f.startswith(S.NO_SYMBOL))
    assert unnamed < 0.02 * sum(gcrypt_functions.values()), gcrypt_functions
    # ...while libsodium's refused file leaves its internal code as without symbol files.
    sodium_functions = {
        f.function for r in rows.values() for f in r.attribution or () if f.library == sodium
    }
    assert any(f.startswith(f"{S.NO_SYMBOL} after ") for f in sodium_functions), sodium_functions
    named = sum(
        f.instructions_per_op
        for f in signing.attribution
        if not f.function.startswith("(") or f.function == S.OTHER
    )
    total = sum(f.instructions_per_op for f in signing.attribution)
    print(f"CS signing named: {named / total:.1%}")
