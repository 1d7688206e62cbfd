# One image for every role of Sabot: the API (`sabot serve`), the workers and the director
# (`sabot worker`), the scheduler (`sabot worker --beat`). Runs as an unprivileged user.
#   docker build -t sabot .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    SABOT_LOG_JSON=true
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin sabot \
    && install -d -o sabot -g sabot -m 700 /home/sabot/.sabot

WORKDIR /src
COPY pyproject.toml README.md ./
COPY api ./api
COPY domain ./domain
COPY infra ./infra
COPY projections ./projections
COPY workers ./workers
RUN pip install . && rm -rf /src

USER sabot
WORKDIR /home/sabot
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=2)"
ENTRYPOINT ["sabot"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000", "--no-worker"]
