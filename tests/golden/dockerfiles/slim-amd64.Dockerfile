# archbench benchmark image for linux/amd64 (profile: slim)
FROM archbench-base/debian-trixie:amd64
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      gcc \
      libc6-dev \
      make \
      pkgconf \
      python3 \
      libgnunet-dev \
      libsodium-dev \
 && rm -rf /var/lib/apt/lists/*
COPY harness/ /opt/archbench/harness/
RUN make -C /opt/archbench/harness
WORKDIR /opt/archbench/harness
ENTRYPOINT ["python3", "/opt/archbench/harness/archbench_harness.py"]
