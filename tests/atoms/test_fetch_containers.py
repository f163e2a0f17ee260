"""Container readers: .deb (dpkg-deb built and hand-made), tar, zip, Qt rcc, OpenTTD cat.

Malicious entries (``..``, absolute paths, links, oversize, forged sizes, cycles) are refused.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_fetch_fixtures import (cat_bytes, dpkg_deb, manual_deb, rcc_bytes, tar_bytes, tone, write_ar,
                                 zip_bytes)

from reasonaudio.errors import ReasonAudioError
from reasonaudio.atoms.fetch.containers import (
    OpenSfxCat,
    RccArchive,
    ar_members,
    check_member_name,
    extract_members,
    read_zip_entry,
    safe_join,
)
from reasonaudio.atoms.fetch.errors import FetchError, UnsafeEntryError

needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb not installed")


@pytest.mark.parametrize("name", ["../x.wav", "a/../../x", "/etc/passwd", "C:/x", "a\\b", "a\x00b",
                                  "", ".", "./"])
def test_unsafe_names_refused(name: str) -> None:
    with pytest.raises(UnsafeEntryError):
        check_member_name(name, "t")


def test_names_normalised() -> None:
    assert check_member_name("./usr/share/x.ogg", "t") == "usr/share/x.ogg"
    assert check_member_name("usr//share/./x.ogg", "t") == "usr/share/x.ogg"


def test_safe_join_stays_inside(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "link").symlink_to(tmp_path)
    assert safe_join(tmp_path / "out", "a/b.wav", "t") == (tmp_path / "out" / "a" / "b.wav").resolve()
    with pytest.raises(UnsafeEntryError):
        safe_join(tmp_path / "out", "link/escaped.wav", "t")


@needs_dpkg
def test_dpkg_built_deb(tmp_path: Path) -> None:
    wav = tone()
    deb = dpkg_deb(tmp_path, "tiny-sounds", "1.0-1",
                   {"usr/share/tiny/a.wav": wav, "usr/share/tiny/big.bin": b"x" * 200_000},
                   links={"usr/share/tiny/link.wav": "a.wav"})
    assert [m[0] for m in ar_members(deb)][0] == "debian-binary"
    res = extract_members(deb, ["usr/share/tiny/a.wav", "usr/share/tiny/link.wav",
                                "usr/share/tiny/big.bin", "usr/share/tiny/missing.wav"],
                          tmp_path / "out", max_member_bytes=100_000)
    assert res["usr/share/tiny/a.wav"].path.read_bytes() == wav
    assert "link" in res["usr/share/tiny/link.wav"].error
    assert "cap" in res["usr/share/tiny/big.bin"].error
    assert "no entry" in res["usr/share/tiny/missing.wav"].error
    assert not (tmp_path / "out" / "usr/share/tiny/link.wav").exists()
    assert not (tmp_path / "out" / "usr/share/tiny/big.bin").exists()


@pytest.mark.parametrize("compression", ["gz", "xz", "bz2", ""])
def test_hand_made_deb_malicious_members(tmp_path: Path, compression: str) -> None:
    deb = manual_deb(tmp_path / "evil.deb", [
        ("./usr/share/ok.wav", b"fine", None),
        ("../escape.wav", b"evil", None),
        ("/usr/share/abs.wav", b"evil", None),
        ("./usr/share/sym.wav", None, "/etc/passwd"),
    ], compression)
    out = tmp_path / "out"
    res = extract_members(deb, ["usr/share/ok.wav", "escape.wav", "usr/share/abs.wav",
                                "usr/share/sym.wav"], out)
    assert res["usr/share/ok.wav"].path.read_bytes() == b"fine"
    assert "'..'" in res["escape.wav"].error
    assert "absolute" in res["usr/share/abs.wav"].error
    assert "link" in res["usr/share/sym.wav"].error
    assert not (tmp_path / "escape.wav").exists()
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == ["usr/share/ok.wav"]


def test_recipe_path_escaping_is_refused(tmp_path: Path) -> None:
    deb = manual_deb(tmp_path / "x.deb", [("./a.wav", b"a", None)])
    with pytest.raises(UnsafeEntryError):
        extract_members(deb, ["../a.wav"], tmp_path / "out")


def test_not_a_deb_and_truncated(tmp_path: Path) -> None:
    bad = tmp_path / "bad.deb"
    bad.write_bytes(b"hello world")
    with pytest.raises(FetchError, match="ar magic"):
        extract_members(bad, ["a"], tmp_path / "o")
    good = manual_deb(tmp_path / "g.deb", [("./a.wav", b"a" * 1000, None)])
    cut = tmp_path / "cut.deb"
    cut.write_bytes(good.read_bytes()[:-200])
    with pytest.raises(FetchError):
        extract_members(cut, ["a.wav"], tmp_path / "o2")


@pytest.mark.parametrize("compression", ["xz", ""])
def test_stream_not_read_past_the_last_wanted_member(tmp_path: Path, compression: str) -> None:
    """Once every wanted file is out, the rest of the data stream is not unpacked: a package
    whose tail is cut still gives the files before the cut, and a file after it still fails."""
    import lzma

    data = tar_bytes([("./usr/share/a.wav", b"a" * 3000, None), ("./usr/share/b.wav", b"b" * 3000, None),
                      ("./usr/share/tail.bin", bytes(range(256)) * 400, None)], "w")
    cut = data[:-60_000]
    payload = lzma.compress(cut) if compression == "xz" else cut
    name = "data.tar" + (f".{compression}" if compression else "")
    deb = write_ar(tmp_path / "cut.deb", [("debian-binary", b"2.0\n"),
                                          ("control.tar.gz", tar_bytes([("./control", b"P\n", None)])),
                                          (name, payload)])
    res = extract_members(deb, ["usr/share/b.wav", "usr/share/a.wav"], tmp_path / "o")
    assert res["usr/share/a.wav"].path.read_bytes() == b"a" * 3000
    assert res["usr/share/b.wav"].path.read_bytes() == b"b" * 3000
    with pytest.raises(FetchError, match="corrupt archive"):
        extract_members(deb, ["usr/share/a.wav", "usr/share/tail.bin"], tmp_path / "o2")


def test_npm_style_tarball(tmp_path: Path) -> None:
    tgz = tmp_path / "pkg-1.0.0.tgz"
    tgz.write_bytes(tar_bytes([("package/audio/C4.ogg", b"ogg", None),
                               ("package/../../x", b"evil", None)]))
    res = extract_members(tgz, ["package/audio/C4.ogg"], tmp_path / "o", kind="tar")
    assert res["package/audio/C4.ogg"].path.read_bytes() == b"ogg"


def test_zip_entries(tmp_path: Path) -> None:
    z = tmp_path / "sounds.pk3"
    z.write_bytes(zip_bytes({"sound/a.ogg": b"abc", "../evil.ogg": b"x", "/abs.ogg": b"y",
                             "sound/big.ogg": b"z" * 10_000},
                            symlinks={"sound/link.ogg": "/etc/passwd"}))
    assert read_zip_entry(z, "sound/a.ogg") == b"abc"
    with pytest.raises(UnsafeEntryError, match="'..'"):
        read_zip_entry(z, "../evil.ogg")
    with pytest.raises(UnsafeEntryError, match="absolute"):
        read_zip_entry(z, "/abs.ogg")
    with pytest.raises(UnsafeEntryError, match="symbolic link"):
        read_zip_entry(z, "sound/link.ogg")
    with pytest.raises(UnsafeEntryError, match="cap"):
        read_zip_entry(z, "sound/big.ogg", max_bytes=1000)
    with pytest.raises(FetchError, match="no entry"):
        read_zip_entry(z, "sound/none.ogg")
    (tmp_path / "not.zip").write_bytes(b"nope")
    with pytest.raises(FetchError, match="zip"):
        read_zip_entry(tmp_path / "not.zip", "a")


@pytest.mark.parametrize("version", [1, 2, 3])
def test_rcc_read_plain_and_zlib(version: int) -> None:
    files = {"/gcompris/src/a/cat.ogg": b"meow" * 100, "/gcompris/src/a/dog.ogg": b"woof",
             "/gcompris/src/b/x.wav": b"riff"}
    rcc = RccArchive(rcc_bytes(files, compress=["/gcompris/src/a/cat.ogg"], version=version))
    assert rcc.list() == sorted(files)
    for path, data in files.items():
        assert rcc.read(path) == data
    assert rcc.read("gcompris/src/a/dog.ogg") == b"woof"
    with pytest.raises(FetchError, match="no entry"):
        rcc.read("/gcompris/src/a/cow.ogg")
    with pytest.raises(FetchError, match="directory"):
        rcc.read("/gcompris/src")


def test_rcc_malicious() -> None:
    files = {"/a/b.ogg": b"x" * 64}
    with pytest.raises(UnsafeEntryError):
        RccArchive(rcc_bytes(files)).read("/a/../b.ogg")
    dotdot = RccArchive(rcc_bytes(files, evil="dotdot"))
    assert "/.." not in dotdot.list()
    cyc = RccArchive(rcc_bytes(files, evil="cycle"))
    assert cyc.list() == []          # the root lists itself: visited once, no infinite loop
    bomb = RccArchive(rcc_bytes(files, evil="bomb"))
    with pytest.raises(UnsafeEntryError, match="cap"):
        bomb.read("/a/b.ogg", max_bytes=1 << 20)
    big = RccArchive(rcc_bytes({"/a/b.ogg": b"y" * 5000}, compress=["/a/b.ogg"]))
    with pytest.raises(UnsafeEntryError, match="cap"):
        big.read("/a/b.ogg", max_bytes=1000)
    with pytest.raises(FetchError, match="qres"):
        RccArchive(b"not an rcc file at all")
    data = bytearray(rcc_bytes(files))
    data[8:12] = (10 ** 8).to_bytes(4, "big")          # tree offset past the end
    with pytest.raises(FetchError):
        RccArchive(bytes(data))


def test_cat_entries() -> None:
    w1, w2 = tone(freq=300), tone(freq=600)
    cat = OpenSfxCat(cat_bytes([('"Horse". License: Creative Commons Zero 1.0.', w1),
                                ("Cow", w2)]))
    assert cat.read(0) == w1
    assert cat.read("#1") == w2 and cat.read("1.wav") == w2 and cat.read("1") == w2
    assert cat.entries[0].name.startswith('"Horse"')
    with pytest.raises(FetchError, match="no entry #5"):
        cat.read(5)
    with pytest.raises(FetchError, match="not a number"):
        cat.read("horse")
    with pytest.raises(UnsafeEntryError, match="cap"):
        cat.read(0, max_bytes=100)


def test_cat_malformed() -> None:
    with pytest.raises(FetchError, match="outside"):
        OpenSfxCat(cat_bytes([("a", tone())], bad_offset=True))
    with pytest.raises(FetchError):
        OpenSfxCat(b"\xff\xff\xff\x7f" + b"\0" * 20)
    notwav = cat_bytes([("a", b"NOTRIFF" * 10)])
    with pytest.raises(FetchError, match="RIFF"):
        OpenSfxCat(notwav).read(0)


def test_errors_are_user_errors() -> None:
    assert issubclass(FetchError, ReasonAudioError)
