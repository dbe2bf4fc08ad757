"""The archive format: path grammar, manifest validation, verification and tar handling."""

from __future__ import annotations

import io
import json
import os
import posixpath
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.archive import (
    MANIFEST_FILE,
    ArchiveManifest,
    FileEntry,
    ImageEntry,
    check_relpath,
    extract_tar,
    images_used,
    list_files,
    verify,
    write_tar,
)
from archbench.archive.format import parse_manifest, resolve_inside
from archbench.errors import ArchiveError
from archbench.result import Execution, HarnessDocument, Result, Setup, TargetInfo

IMAGE_ID = "sha256:" + "ab" * 32
RUN_ID = "20261201T090000Z-abc123"

_component = st.from_regex(r"\A[A-Za-z0-9_][A-Za-z0-9._+-]{0,20}\Z")
_valid_paths = st.lists(_component, min_size=1, max_size=8).map("/".join)


@given(_valid_paths)
def test_valid_paths_are_accepted_unchanged(path: str) -> None:
    assert str(check_relpath(path)) == path


@given(st.text(max_size=60))
@settings(max_examples=500)
def test_any_accepted_path_stays_below_the_root(path: str) -> None:
    try:
        rel = check_relpath(path)
    except ArchiveError:
        return
    assert not rel.is_absolute() and ".." not in rel.parts and "." not in rel.parts
    joined = posixpath.normpath(posixpath.join("/archive", str(rel)))
    assert joined.startswith("/archive/")
    assert "\\" not in path and "\x00" not in path


@pytest.mark.slow
@given(st.text(alphabet="ab./\\-_", max_size=30))
# No deadline: each example makes and removes a directory, which a busy machine can slow
# past Hypothesis's 200 ms (this file flaked once so).
@settings(max_examples=300, deadline=None)
def test_resolve_inside_never_leaves_the_root(path: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "arc"
        root.mkdir()
        try:
            resolved = resolve_inside(root, path)
        except ArchiveError:
            return
        assert resolved.is_relative_to(root.resolve()) and resolved != root.resolve()


@given(_valid_paths, st.integers(min_value=0, max_value=8), st.sampled_from(["..", ".", ""]))
def test_dot_dot_dot_and_empty_components_are_refused(path: str, at: int, bad: str) -> None:
    parts = path.split("/")
    parts.insert(min(at, len(parts)), bad)
    with pytest.raises(ArchiveError):
        check_relpath("/".join(parts))


@given(_valid_paths)
def test_absolute_paths_are_refused(path: str) -> None:
    with pytest.raises(ArchiveError, match="absolute"):
        check_relpath("/" + path)


@pytest.mark.parametrize(
    "bad",
    ["", "a//b", "a/", "-rf", ".hidden", "a\\b", "c:x", "a\x00b", "x" * 129, "/".join("a" * 9)],
)
def test_grammar_refuses(bad: str) -> None:
    with pytest.raises(ArchiveError):
        check_relpath(bad)


def test_not_a_string_is_refused() -> None:
    with pytest.raises(ArchiveError, match="expected a relative path string, got int"):
        check_relpath(3, "files.0.path")


def test_resolve_inside_refuses_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("x")
    root = tmp_path / "arc"
    root.mkdir()
    (root / "link").symlink_to(outside)
    (root / "ok").write_text("y")
    assert resolve_inside(root, "ok") == (root / "ok").resolve()
    with pytest.raises(ArchiveError, match="symbolic link"):
        resolve_inside(root, "link/secret")


def _make_archive(root: Path) -> ArchiveManifest:
    """A small archive on disk: run manifest, one result, one fake image tar."""
    (root / "results" / RUN_ID).mkdir(parents=True)
    (root / "results" / RUN_ID / "run.json").write_text('{"run": 1}\n')
    (root / "results" / RUN_ID / "t1.json").write_text('{"result": 1}\n')
    (root / "images").mkdir()
    (root / "images" / "amd64-abababababab.tar").write_bytes(b"\0" * 4096)
    manifest = ArchiveManifest(
        archive_id=f"{RUN_ID}-0011aabb",
        created_at="2026-12-01T09:00:00Z",
        archbench_version="0.1.0",
        run_id=RUN_ID,
        run_manifest=f"results/{RUN_ID}/run.json",
        images=(
            ImageEntry(
                id=IMAGE_ID,
                tag="archbench/bench:amd64-0123456789abcdef",
                arch="amd64",
                platform="linux/amd64",
                host="local",
                file="images/amd64-abababababab.tar",
                targets=("t1",),
            ),
        ),
        files=tuple(list_files(root)),
    )
    (root / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=2))
    return manifest


def test_verify_accepts_a_whole_archive(tmp_path: Path) -> None:
    written = _make_archive(tmp_path)
    checked = verify(tmp_path)
    assert checked.manifest == written
    assert [f.path for f in written.files] == [
        "images/amd64-abababababab.tar",
        f"results/{RUN_ID}/run.json",
        f"results/{RUN_ID}/t1.json",
    ]
    assert written.files[0].size == 4096
    assert written.files[0].sha256 == (
        "ad7facb2586fc6e966c004d7d1d16b024f5805ff7cb47c7a85dabd8b48892ca7"
    )
    assert checked.ref.source_run_id == RUN_ID
    assert checked.ref.archive_id == f"{RUN_ID}-0011aabb"
    assert len(checked.manifest_sha256) == 64
    assert written.targets["t1"].id == IMAGE_ID


def test_verify_names_a_changed_file(tmp_path: Path) -> None:
    _make_archive(tmp_path)
    victim = tmp_path / "results" / RUN_ID / "t1.json"
    victim.write_text('{"result": 2}\n')
    with pytest.raises(ArchiveError, match=f"results/{RUN_ID}/t1.json has sha256 [0-9a-f]{{64}}"):
        verify(tmp_path)


def test_verify_names_a_truncated_file(tmp_path: Path) -> None:
    _make_archive(tmp_path)
    with (tmp_path / "images" / "amd64-abababababab.tar").open("r+b") as fh:
        fh.truncate(100)
    with pytest.raises(ArchiveError, match="has 100 bytes, the manifest says 4096"):
        verify(tmp_path)


def test_verify_names_a_missing_file(tmp_path: Path) -> None:
    _make_archive(tmp_path)
    (tmp_path / "results" / RUN_ID / "t1.json").unlink()
    with pytest.raises(ArchiveError, match=r"t1\.json is listed in the manifest but missing"):
        verify(tmp_path)


def test_verify_refuses_a_file_replaced_by_a_symlink(tmp_path: Path) -> None:
    root = tmp_path / "arc"
    root.mkdir()
    _make_archive(root)
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"result": 1}\n')
    (root / "results" / RUN_ID / "t1.json").unlink()
    (root / "results" / RUN_ID / "t1.json").symlink_to(outside)
    with pytest.raises(ArchiveError, match="symbolic link"):
        verify(root)


def _raw_manifest(tmp_path: Path) -> dict[str, object]:
    _make_archive(tmp_path)
    data: dict[str, object] = json.loads((tmp_path / MANIFEST_FILE).read_text())
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"version": 2}, "archive version 2 is not supported .* reads version 1"),
        ({"format": "archbench-result"}, "'format' is 'archbench-result'"),
        ({"run_manifest": "../run.json"}, "at 'run_manifest': .*'\\.\\.' component"),
        ({"extra": 1}, "at 'extra': unknown key"),
        ({"images": []}, "at 'images'"),
    ],
)
def test_parse_manifest_errors_name_the_key(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    raw = _raw_manifest(tmp_path) | change
    with pytest.raises(ArchiveError, match=message):
        parse_manifest(json.dumps(raw).encode(), "manifest.json")


def test_manifest_paths_are_checked(tmp_path: Path) -> None:
    raw = _raw_manifest(tmp_path)
    files = raw["files"]
    assert isinstance(files, list)
    files[0]["path"] = "/etc/passwd"
    with pytest.raises(ArchiveError, match=r"at 'files\[0\]\.path': .*absolute"):
        parse_manifest(json.dumps(raw).encode(), "manifest.json")


def test_manifest_refers_only_to_listed_files(tmp_path: Path) -> None:
    raw = _raw_manifest(tmp_path)
    files = raw["files"]
    assert isinstance(files, list)
    raw["files"] = files[1:]
    with pytest.raises(
        ArchiveError,
        match=r"referred to but not listed in 'files': 'images/amd64-abababababab\.tar'",
    ):
        parse_manifest(json.dumps(raw).encode(), "manifest.json")


def test_manifest_refuses_duplicates(tmp_path: Path) -> None:
    raw = _raw_manifest(tmp_path)
    files = raw["files"]
    assert isinstance(files, list)
    raw["files"] = [*files, files[0]]
    with pytest.raises(ArchiveError, match=r"listed twice: 'images/amd64-abababababab\.tar'"):
        parse_manifest(json.dumps(raw).encode(), "manifest.json")


def test_not_json_is_refused() -> None:
    with pytest.raises(ArchiveError, match=r"m\.json: not valid JSON"):
        parse_manifest(b"{", "m.json")


def test_verify_a_directory_without_manifest(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match=r"no manifest\.json"):
        verify(tmp_path)


def test_list_files_uses_given_hashes(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("x")
    given_entry = FileEntry(path="a", size=1, sha256="0" * 64)
    assert list_files(tmp_path, {"a": given_entry}) == [given_entry]


def test_list_files_refuses_bad_names(tmp_path: Path) -> None:
    (tmp_path / "bad name").write_text("x")
    with pytest.raises(ArchiveError, match="'bad name'"):
        list_files(tmp_path)


def test_tar_round_trip(tmp_path: Path) -> None:
    root = tmp_path / "arc"
    root.mkdir()
    written = _make_archive(root)
    out = tmp_path / "arc.tar"
    write_tar(root, out)
    with tarfile.open(out) as tar:
        names = tar.getnames()
        assert names[0] == "arc/manifest.json"
        assert all(m.uid == 0 and m.uname == "" for m in tar.getmembers())
    unpacked = extract_tar(out, tmp_path / "unpacked")
    assert unpacked == tmp_path / "unpacked" / "arc"
    assert verify(unpacked).manifest == written
    # Unpacked before: unpacked again (the tar is what is verified), at the same place.
    assert extract_tar(out, tmp_path / "unpacked") == unpacked
    with pytest.raises(ArchiveError, match="exists already"):
        write_tar(root, out)


def _tar_with(tmp_path: Path, member: tarfile.TarInfo, data: bytes = b"") -> Path:
    path = tmp_path / "evil.tar"
    with tarfile.open(path, "w") as tar:
        top = tarfile.TarInfo("arc")
        top.type = tarfile.DIRTYPE
        tar.addfile(top)
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data) if data else None)
    return path


@pytest.mark.parametrize(
    ("name", "kind", "message"),
    [
        ("arc/../../escape", tarfile.REGTYPE, "'\\.\\.' component"),
        ("/arc/abs", tarfile.REGTYPE, "absolute"),
        ("other/file", tarfile.REGTYPE, "outside the top directory"),
        ("arc/link", tarfile.SYMTYPE, "link or special file"),
        ("arc/hard", tarfile.LNKTYPE, "link or special file"),
        ("arc/dev", tarfile.CHRTYPE, "link or special file"),
    ],
)
def test_extract_refuses_unsafe_members(
    tmp_path: Path, name: str, kind: bytes, message: str
) -> None:
    member = tarfile.TarInfo(name)
    member.type = kind
    member.linkname = "/etc/passwd" if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE) else ""
    evil = _tar_with(tmp_path, member, b"x" if kind == tarfile.REGTYPE else b"")
    dest = tmp_path / "dest"
    with pytest.raises(ArchiveError, match=message):
        extract_tar(evil, dest)
    assert not dest.exists()
    assert not (tmp_path / "escape").exists()


def test_extract_refuses_a_non_tar(tmp_path: Path) -> None:
    path = tmp_path / "x.tar"
    path.write_bytes(os.urandom(100))
    with pytest.raises(ArchiveError, match="not an uncompressed tar"):
        extract_tar(path, tmp_path / "dest")


def _result(target: str, image_id: str, host: str = "local") -> Result:
    return Result(
        run_id=RUN_ID,
        target=TargetInfo(
            name=target, arch="amd64", platform="linux/amd64", base="b", profile="slim"
        ),
        execution=Execution(
            emulated=False,
            host_arch="amd64",
            host_cpu="cpu",
            image_id=image_id,
            image_tag=f"archbench/bench:amd64-{image_id[-16:]}",
            docker_host=host,
        ),
        harness=HarnessDocument(
            format="archbench-harness",
            version=1,
            harness_version="0.2.0",
            started_at="2026-12-01T09:00:00Z",
            duration_s=1.0,
            setup=Setup(
                cpu_model="cpu", cores=2, machine="x86_64", kernel="6", os="Debian", packages={}
            ),
            rows=(),
        ),
    )


def test_images_used_groups_targets_by_image() -> None:
    other = "sha256:" + "cd" * 32
    uses = images_used(
        [
            _result("a", IMAGE_ID),
            _result("a", IMAGE_ID),  # a second repeat of the same target
            _result("b", other, "arm-box (ssh://arm-box)"),
            _result("c", IMAGE_ID),
        ]
    )
    assert [(u.image_id, u.targets, u.host) for u in uses] == [
        (IMAGE_ID, ("a", "c"), "local"),
        (other, ("b",), "arm-box"),
    ]


def test_images_used_refuses_one_image_on_two_hosts() -> None:
    with pytest.raises(ArchiveError, match="ran on hosts local and arm-box"):
        images_used([_result("a", IMAGE_ID), _result("b", IMAGE_ID, "arm-box (tcp://x)")])


def test_an_images_gnunet_source_travels_with_it() -> None:
    # A rerun from the archive builds nothing, so the image's entry is where the
    # provenance of its libgnunetutil survives.
    source: dict[str, str | bool | None] = {
        "kind": "tarball",
        "location": "/x/gnunet-0.27.0.tar.gz",
        "sha256": "ab" * 32,
        "dirty": False,
        "version": "0.27.0",
    }
    built = _result("a", IMAGE_ID)
    assert built.execution is not None
    built = built.model_copy(
        update={"execution": built.execution.model_copy(update={"gnunet_source": source})}
    )
    (use,) = images_used([built])
    assert use.gnunet_source == source
    entry = ImageEntry(
        id=IMAGE_ID,
        tag=use.tag,
        arch="amd64",
        platform="linux/amd64",
        host="local",
        file="images/a.tar",
        targets=("a",),
        gnunet_source=use.gnunet_source,
    )
    assert ImageEntry.model_validate_json(entry.model_dump_json()).gnunet_source == source
    # Archives written before the field load as Debian-built images.
    legacy = entry.model_dump(exclude={"gnunet_source"})
    assert ImageEntry.model_validate(legacy).gnunet_source is None
