# syntax=docker/dockerfile:1
# Optional: the embedding model and the cross-encoder as a small versioned image, for the chart's model initContainer
# (embedding.modelVolume.existingClaim: "" and initContainer.image set to this image). Build it
# with the folder scripts/infra/fetch-model.sh fills as the context:
#   bash scripts/infra/fetch-model.sh
#   docker build -f deploy/model.Dockerfile -t kb/model:all-MiniLM-L6-v2-1 "${KB_HOME:-$HOME/.cache/kb}/models"
# The initContainer copies /model/. into the pod's model volume (mounted at /models).
FROM busybox:1.37.0
COPY all-MiniLM-L6-v2/ /model/all-MiniLM-L6-v2/
COPY ms-marco-MiniLM-L-12-v2/ /model/ms-marco-MiniLM-L-12-v2/
USER 10001:10001
CMD ["sh", "-c", "cp -R /model/. \"${EMBEDDING_MODEL_DIR:-/models}\"/"]
