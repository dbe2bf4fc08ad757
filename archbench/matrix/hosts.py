"""Docker hosts of matrix.yml (``hosts:``): where targets build and run, and how to reach them.

This module is pure: it never imports ``docker`` (:mod:`archbench.hosts.engine` connects).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, StrictBool, StrictInt, StrictStr, model_validator

from archbench.inputs import Strict


class Tls(Strict):
    """TLS client settings for a ``tcp://`` Docker host (paths to PEM files)."""

    ca_cert: StrictStr | None = None
    client_cert: StrictStr | None = None
    client_key: StrictStr | None = None
    verify: StrictBool = True

    @model_validator(mode="after")
    def _pair(self) -> Tls:
        if (self.client_cert is None) != (self.client_key is None):
            raise ValueError("'client_cert' and 'client_key' go together")
        for key in ("ca_cert", "client_cert", "client_key"):
            path = getattr(self, key)
            if path is not None and not Path(path).expanduser().is_file():
                raise ValueError(f"{key}: no such file {path!r}")
        return self


class Host(Strict):
    """A Docker engine that targets can build and run on.

    Exactly one of ``url`` (``unix://…``, ``tcp://host:port``, ``ssh://user@host``)
    and ``context`` (a ``docker context`` name) is given. ``max_parallel_runs``
    is how many benchmark containers may run on it at once (1: runs never
    overlap, since two benchmarks on one CPU corrupt each other's numbers).
    ``build_network`` is the network image builds use (``host`` for engines
    started without a bridge). Credentials never go into URLs: use ssh keys
    or TLS certificates.
    """

    url: StrictStr | None = None
    context: StrictStr | None = None
    tls: Tls | None = None
    max_parallel_runs: StrictInt = Field(default=1, ge=1, le=64)
    build_network: StrictStr | None = None

    @model_validator(mode="after")
    def _endpoint(self) -> Host:
        if (self.url is None) == (self.context is None):
            raise ValueError("give exactly one of 'url' and 'context'")
        if self.url is not None:
            scheme, sep, rest = self.url.partition("://")
            if not sep or scheme not in ("unix", "tcp", "ssh"):
                raise ValueError(
                    f"url {self.url!r}: use unix://PATH, tcp://HOST:PORT or ssh://USER@HOST"
                )
            userinfo = rest.split("/", 1)[0].rpartition("@")[0]
            if ":" in userinfo:
                raise ValueError(
                    "url: a password must not be written into matrix.yml (it would end up "
                    "in logs); use an ssh key (ssh-agent) or TLS certificates"
                )
            if scheme == "tcp" and ":" not in rest:
                raise ValueError(f"url {self.url!r}: tcp:// needs a port (2375, or 2376 with TLS)")
        if self.tls is not None and not (self.url or "").startswith("tcp://"):
            raise ValueError("'tls' applies to tcp:// hosts only")
        return self

    @property
    def display(self) -> str:
        """The endpoint without user names, safe for logs and results files."""
        if self.context is not None:
            return f"context {self.context}"
        assert self.url is not None
        scheme, _, rest = self.url.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"


LOCAL_HOST = "local"
"""Name of the implicit host: the engine of the environment (``DOCKER_HOST`` or the socket)."""
