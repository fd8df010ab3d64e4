#!/usr/bin/env bash
# Installs what hudi-ray's readers and the RayDP bridge need on a Ray node
# (Ubuntu-based rayproject/ray images and AMIs): Java 17 for Spark, and the
# Python packages. Idempotent; used by aws.yaml and kuberay.yaml.
#
#   HUDI_RAY_PIP_SPEC  how pip finds hudi-ray (default: the mounted checkout
#                      ~/hudi-ray, else the published package)
set -euo pipefail

if ! java -version 2>&1 | grep -q '"17\.'; then
  sudo apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi
JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
grep -q "JAVA_HOME=" ~/.bashrc 2>/dev/null || echo "export JAVA_HOME=$JAVA_HOME" >> ~/.bashrc

if [ -z "${HUDI_RAY_PIP_SPEC:-}" ]; then
  if [ -f ~/hudi-ray/pyproject.toml ]; then
    HUDI_RAY_PIP_SPEC="$HOME/hudi-ray[s3,spark]"
  else
    HUDI_RAY_PIP_SPEC="hudi-ray[s3,spark]==0.1.0"
  fi
fi
# The versions pyproject.toml pins for the Ray layer and the Spark bridge.
pip install --quiet "ray[data]==2.60.0" "raydp==1.6.5" "pyspark>=3.5,<3.6" "s3fs>=2024.6" "$HUDI_RAY_PIP_SPEC"
python -c "import hudi_ray, raydp, pyspark; print('hudi-ray', hudi_ray.__version__, 'raydp', raydp.__version__)"
