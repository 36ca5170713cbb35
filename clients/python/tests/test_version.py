"""The package's version is loopd's release (Sources/LoopdProtocol/Version.swift),
the one the daemon's `ping` reports."""

import re

import loopd

from conftest import REPO


def test_package_version_is_loopds_release():
    source = (REPO / "Sources/LoopdProtocol/Version.swift").read_text()
    release = re.search(r'static let current = "([^"]+)"', source).group(1)
    assert loopd.__version__ == release


def test_ping_reports_the_same_release(client):
    assert client.ping().version == loopd.__version__
