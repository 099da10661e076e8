#!/usr/bin/python3
"""Bag-of-words LIBSVM data from the descriptions of Debian's binary packages, built offline
from apt's package lists.

    bench/data/debian_packages.py --out debian-packages.svm [--lists DIR] [--synopsis-only]

Rows: one per binary package in the Packages files under --lists (default /var/lib/apt/lists),
every component and suite found there except backports; a package listed in several suites
(bookworm, bookworm-updates, bookworm-security) takes its record from the last of: the base
suite, then the others in file-name order. Rows are sorted by package name.

Label: +1 if the package's Section is libs, libdevel or oldlibs (in any component, e.g.
non-free/libs), else -1: a property the archive's maintainers gave the package, not a
function of the features.

Text: the synopsis plus the long description (Description-en from the Translation-en files,
joined on Description-md5). The package's Name, Section, Tag and every other field stay out
of the text. Words are the maximal runs of Unicode letters and digits of the lowercased text
that are at least 2 characters long and not all digits.

Features: each word is hashed with 32-bit FNV-1a over its UTF-8 bytes (offset basis 2166136261,
prime 16777619); its feature is (hash mod 2^18) + 1, so indices are 1..262144. Words that
collide add up. Values are tf-idf, tf = count of the feature in the row, idf = ln((1 + N) /
(1 + df)) + 1 over the N rows, and each row is scaled to unit Euclidean norm. Values are
written with 6 significant digits; rows with no words are left out. The same lists give the
same bytes. The file is written under a temporary name and renamed into place.

The long descriptions are in the Translation-en files, which apt does not download when
Acquire::Languages is "none" (Debian's Docker images set that). To fetch them into a
directory of your own, leaving the system's lists alone:

    mkdir -p DIR/partial
    apt-get update -o Acquire::Languages=en -o Dir::State::Lists=DIR \\
        -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=

and pass --lists DIR. --synopsis-only builds the set from the one-line synopses in the
Packages files alone (a much sparser set).

Needs python3 and numpy only; compressed lists (.lz4, .zst, ...) are read through
/usr/lib/apt/apt-helper cat-file, which apt ships.
"""

import argparse
import bz2
import glob
import gzip
import lzma
import os
import re
import subprocess
import sys

import numpy as np

from svmfile import write_atomically

HASH_BITS = 18
LABEL_SECTIONS = ("libs", "libdevel", "oldlibs")
APT_HELPER = "/usr/lib/apt/apt-helper"
WORD = re.compile(r"[^\W_]+")


def die(message):
    sys.exit("debian_packages.py: " + message)


def read_list(path):
    """The text of an apt list file, whatever its compression."""
    openers = {".gz": gzip.open, ".xz": lzma.open, ".lzma": lzma.open, ".bz2": bz2.open}
    ext = os.path.splitext(path)[1]
    if ext in openers:
        with openers[ext](path, "rb") as f:
            raw = f.read()
    elif path.endswith(("Packages", "Translation-en")):
        with open(path, "rb") as f:
            raw = f.read()
    else:  # .lz4, .zst: apt's own decompressors
        if not os.access(APT_HELPER, os.X_OK):
            die(f"{path}: need {APT_HELPER} (package apt) to decompress it")
        raw = subprocess.run([APT_HELPER, "cat-file", path], check=True, stdout=subprocess.PIPE).stdout
    return raw.decode("utf-8", errors="replace")


def stanzas(text):
    """The records of a deb822 file, as dicts of field -> value (continuation lines kept,
    joined with newlines)."""
    for block in text.split("\n\n"):
        fields, key = {}, None
        for line in block.split("\n"):
            if not line:
                continue
            if line[0] in " \t":
                if key is not None:
                    fields[key] += "\n" + line
                continue
            key, _, value = line.partition(":")
            fields[key] = value.strip()
        if fields:
            yield fields


def suite_order(path):
    """Base suite first, then the updates and security suites, in file-name order."""
    name = os.path.basename(path)
    return (1 if re.search(r"-(updates|security|proposed-updates)_", name) else 0, name)


def list_files(lists, kind):
    """The Packages (binary-ARCH) or Translation-en (i18n) files under lists, backports left out."""
    suffix = r"_binary-[^_]+_Packages" if kind == "Packages" else r"_i18n_Translation-en"
    pattern = re.compile(suffix + r"(\.(gz|xz|lzma|bz2|lz4|zst))?$")
    files = [p for p in glob.glob(os.path.join(lists, "*"))
             if pattern.search(os.path.basename(p)) and "backports" not in os.path.basename(p)]
    return sorted(files, key=suite_order)


def long_description(value):
    """A deb822 Description value without its first line: continuation lines with their
    leading space removed, ' .' paragraph breaks dropped."""
    lines = value.split("\n")[1:]
    return "\n".join("" if line.strip() == "." else line[1:] for line in lines)


def fnv1a32(word):
    h = 2166136261
    for byte in word.encode("utf-8"):
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def words(text):
    return [w for w in WORD.findall(text.lower()) if len(w) >= 2 and not w.isdigit()]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lists", default="/var/lib/apt/lists", help="apt's lists directory (default %(default)s)")
    parser.add_argument("--synopsis-only", action="store_true",
                        help="use only the one-line synopses of the Packages files (no Translation-en needed)")
    parser.add_argument("--out", required=True, help="output LIBSVM file")
    args = parser.parse_args()

    package_files = list_files(args.lists, "Packages")
    if not package_files:
        die(f"no Packages files in {args.lists}: run 'apt-get update' (as root) first, or pass --lists DIR "
            "with lists fetched as described in --help")
    translation_files = [] if args.synopsis_only else list_files(args.lists, "Translation-en")
    if not args.synopsis_only and not translation_files:
        die(f"no Translation-en files in {args.lists} (apt's Acquire::Languages is probably \"none\"), so no long "
            "descriptions. Fetch them into a directory of your own and pass --lists DIR:\n"
            "  mkdir -p DIR/partial && apt-get update -o Acquire::Languages=en -o Dir::State::Lists=DIR "
            "-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=\n"
            "or build from the synopses alone with --synopsis-only")

    packages = {}  # name -> (section, synopsis, description-md5, long description in Packages)
    for path in package_files:
        for record in stanzas(read_list(path)):
            name, section = record.get("Package"), record.get("Section", "")
            if not name or "Description" not in record:
                continue
            description = record["Description"]
            packages[name] = (section, description.split("\n")[0].strip(), record.get("Description-md5", ""),
                              long_description(description))
    translations = {}  # description-md5 -> long description
    for path in translation_files:
        for record in stanzas(read_list(path)):
            md5, description = record.get("Description-md5"), record.get("Description-en")
            if md5 and description is not None:
                translations[md5] = long_description(description)

    names = sorted(packages)
    hashes = {}
    doc_ids, features, labels = [], [], []
    missing_long = empty = 0
    mask = (1 << HASH_BITS) - 1
    for name in names:
        section, synopsis, md5, inline_long = packages[name]
        text = synopsis
        if not args.synopsis_only:
            long_text = inline_long or translations.get(md5, "")
            if not long_text:
                missing_long += 1
            text += "\n" + long_text
        ids = []
        for w in words(text):
            h = hashes.get(w)
            if h is None:
                h = hashes[w] = (fnv1a32(w) & mask) + 1
            ids.append(h)
        if not ids:
            empty += 1
            continue
        doc_ids.extend([len(labels)] * len(ids))
        features.extend(ids)
        labels.append(1 if section.rsplit("/", 1)[-1] in LABEL_SECTIONS else -1)

    rows = len(labels)
    doc_ids = np.asarray(doc_ids, dtype=np.int64)
    features = np.asarray(features, dtype=np.int64)
    keys, tf = np.unique(doc_ids << 20 | features, return_counts=True)  # sorted by row, then feature
    row_of, col_of = keys >> 20, keys & ((1 << 20) - 1)
    df = np.bincount(col_of, minlength=mask + 2)
    idf = np.log((1.0 + rows) / (1.0 + df)) + 1.0
    values = tf * idf[col_of]
    norms = np.sqrt(np.bincount(row_of, weights=values * values, minlength=rows))
    values /= norms[row_of]
    starts = np.searchsorted(row_of, np.arange(rows + 1))
    cols_text = col_of.astype(str)

    def write(f):
        for r in range(rows):
            a, b = starts[r], starts[r + 1]
            entries = " ".join(c + ":" + ("%.6g" % v) for c, v in zip(cols_text[a:b], values[a:b].tolist()))
            f.write(("+1 " if labels[r] > 0 else "-1 ") + entries + "\n")

    write_atomically(args.out, write)
    labels = np.asarray(labels)
    positive = int((labels > 0).sum())
    print(f"debian_packages.py: {args.out}: {rows} rows, {1 << HASH_BITS} features ({np.count_nonzero(df)} used), "
          f"{keys.size} nonzeros ({keys.size / rows:.1f} per row), {positive} positive ({positive / rows:.1%}); "
          f"{len(hashes)} distinct words; {len(package_files)} Packages and {len(translation_files)} "
          f"Translation-en files from {args.lists}; {missing_long} packages without a long description, "
          f"{empty} without any word left out", file=sys.stderr)


if __name__ == "__main__":
    main()
