"""A stand-in for paella, the platform helper of RedisLabs' "readies".

RedisBloom's tests/flow/common.py reads paella.Platform().osnick, .os and
.arch at import time; only those are given here.
"""

import platform


class Platform:
    def __init__(self):
        self.os = platform.system().lower()
        self.arch = {"x86_64": "x64", "aarch64": "arm64v8"}.get(platform.machine(), platform.machine())
        self.osnick = _os_release().get("VERSION_CODENAME", "")


def _os_release():
    try:
        with open("/etc/os-release") as f:
            pairs = (line.rstrip("\n").split("=", 1) for line in f if "=" in line)
            return {k: v.strip('"') for k, v in pairs}
    except OSError:
        return {}
