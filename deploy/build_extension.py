"""Build hook: compiles app/dns/_mmsg.c, the optional recvmmsg/sendmmsg module.

Optional by design: where there is no C compiler, no Python headers or no
recvmmsg (not Linux), the package installs without it and the DNS server
uses one recvfrom/sendto per datagram, saying so in its log at start.
An editable install (`make install`) builds the module in place; a wheel
carries it and is tagged for this platform.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("app/dns/_mmsg.c")


def compile_extension(root: Path, target: Path) -> bool:
    """Compile the module to `target`; False (with a warning) if it cannot."""
    compiler = shlex.split(sysconfig.get_config_var("CC") or "cc")
    include = sysconfig.get_paths()["include"]
    command = [
        *compiler,
        "-shared",
        "-fPIC",
        "-O2",
        f"-I{include}",
        str(root / SOURCE),
        "-o",
        str(target),
    ]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        print(f"tmdns: _mmsg not built, UDP uses one datagram per system call: {detail}",
              file=sys.stderr)
        return False
    return True


class ExtensionHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("TMDNS_NO_EXTENSION"):
            return
        root = Path(self.root)
        name = "_mmsg" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
        if version == "editable":
            compile_extension(root, root / "app" / "dns" / name)
            return
        built = Path(tempfile.mkdtemp()) / name
        if compile_extension(root, built):
            build_data["force_include"][str(built)] = f"app/dns/{name}"
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
