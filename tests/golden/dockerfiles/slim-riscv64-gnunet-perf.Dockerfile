# archbench benchmark image for linux/riscv64 (profile: slim)
FROM archbench-base/debian-trixie:riscv64
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
# Suite gnunet-perf: GNUnet's perf_crypto_rsa/_cs from the Debian source of the installed
# libgnunetutil, with archbench's patch; a failure is recorded for the suite, not fatal.
COPY gnunet-perf/ /opt/archbench/gnunet-perf-src/
RUN sh /opt/archbench/gnunet-perf-src/build.sh
WORKDIR /opt/archbench/harness
ENTRYPOINT ["python3", "/opt/archbench/harness/archbench_harness.py"]
