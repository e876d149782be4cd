# The course as a container image: one course process, listening on 0.0.0.0:8501.
#
#   docker build -t gpt2-to-k3 .
#   docker run --rm -p 8501:8501 gpt2-to-k3                      # http://localhost:8501
#   docker run --rm -p 8501:8501 -e COURSE_PUBLIC=1 gpt2-to-k3 --server.allowedHosts course.example.org
#
# Arguments after the image name reach Streamlit, as they do through ./run.sh. One process uses at
# most one core (README.md, "Hosting for a class"); for more readers run more containers behind a
# proxy with sticky sessions: deploy/kubernetes/ and README.md, "Past one machine".
# Dockerfile reference: https://docs.docker.com/reference/dockerfile/
# The official image, slim variant: https://hub.docker.com/_/python (the .venv the tests run in is 3.11)
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# CPU PyTorch first, from PyTorch's own CPU wheel index (https://pytorch.org/get-started/locally/):
# PyPI's Linux x86-64 torch wheel is the CUDA build and pulls the nvidia-* CUDA wheels, gigabytes
# that a CPU-only course never loads. --index-url, not --extra-index-url, and for this one line
# only: with an extra index pip takes the highest version from either index for every package
# (https://pip.pypa.io/en/stable/cli/pip_install/#finding-packages), so nothing else may come from
# the second one. The pin is requirements.txt's (tests/deploy/test_dockerfile.py checks it); the
# installed 2.13.0+cpu satisfies `torch==2.13.0` there, since a specifier without a local label
# ignores the candidate's (https://peps.python.org/pep-0440/#version-matching), so the next line
# keeps it. The check fails the build if a CUDA build got in anyway.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
    && python -c "import torch, sys; sys.exit(torch.version.cuda is not None)"

# The runtime requirements only (not requirements-dev.txt: no tests, browsers or linters)
COPY requirements.txt /tmp/requirements.txt
RUN pip install -r /tmp/requirements.txt && rm /tmp/requirements.txt

# A user of its own with a fixed numeric id, so Kubernetes' runAsNonRoot can check it
# (https://kubernetes.io/docs/tasks/configure-pod-container/security-context/); the app's files stay
# root's and read-only to it. Its cache folders exist and are its own, so a volume mounted there
# (docker's named volumes copy ownership from the image) is writable.
RUN groupadd --gid 10001 course \
    && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin course \
    && mkdir -p /home/course/.cache/huggingface /home/course/.cache/gpt2-to-k3 \
    && chown -R course:course /home/course/.cache

# The course: code, the shipped checkpoints (assets/), the catalogs, the committed GPU run the pages
# draw (docs/gpu-runs/), .streamlit/config.toml (read from the working folder). .dockerignore says
# what stays out. The Japanese catalog is compiled here, since the app's folder is read-only at run time.
WORKDIR /app
COPY . /app
RUN python -m scripts.catalogs compile

USER 10001:10001

# Where the course looks for real weights (core/models/fetch.py): the Hugging Face cache under
# HF_HOME — mount one here (-v ~/.cache/huggingface:/home/course/.cache/huggingface) — or a folder
# named by COURSE_GPT2_PATH / COURSE_QWEN35_PATH (-v ~/models/gpt2:/models/gpt2:ro
# -e COURSE_GPT2_PATH=/models/gpt2); those two are unset here: set, they name a folder the pages try.
# COURSE_CACHE_DIR keeps the GPU page's last run and its lock. COURSE_PUBLIC=1 (docker run -e) is
# public mode: no benchmark and no download on the shared server.
# Streamlit reads STREAMLIT_SERVER_* over .streamlit/config.toml, and command-line options over both
# (https://docs.streamlit.io/develop/concepts/configuration/options): the config keeps 127.0.0.1
# for ./run.sh; in a container the address is 0.0.0.0, or nothing outside could reach it.
ENV HOME=/home/course \
    HF_HOME=/home/course/.cache/huggingface \
    COURSE_CACHE_DIR=/home/course/.cache/gpt2-to-k3 \
    COURSE_PUBLIC=0 \
    STREAMLIT_SERVER_ADDRESS=0.0.0.0 \
    STREAMLIT_SERVER_PORT=8501

EXPOSE 8501

# Streamlit's health route answers "ok" once the server runs (deploy/classroom.sh waits on the same);
# slim has no curl, so Python asks. https://docs.docker.com/reference/dockerfile/#healthcheck
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; port = os.environ.get('STREAMLIT_SERVER_PORT', '8501'); sys.exit(urllib.request.urlopen(f'http://127.0.0.1:{port}/_stcore/health', timeout=4).read() != b'ok')"]

# As run.sh: `python -m streamlit run app.py "$@"` (docker run's arguments land after it)
ENTRYPOINT ["python", "-m", "streamlit", "run", "app.py"]
CMD []
