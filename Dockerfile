# toolfold in a container: one static binary on an empty image, run as an
# unprivileged user.
#
#   docker build -t toolfold .
#   docker run --rm -p 127.0.0.1:8080:8080 \
#     -v "$PWD/toolfold.json:/etc/toolfold/toolfold.json:ro" \
#     toolfold serve --http 0.0.0.0:8080 --allow-unauthenticated-remote
#
# Inside, toolfold must listen on 0.0.0.0 for the published port to reach
# it, and it refuses such an address without http.auth tokens: either give
# the config tokens (the default command then serves), or publish the port
# on 127.0.0.1 only and allow it as above. The image holds no node or
# Python: servers started with npx or uvx need an image of your own built
# FROM this one; remote servers (a "url" entry) and in-process tools work
# as they are.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The .git folder is not copied in, so Go cannot read the version itself:
# docker build --build-arg VERSION="$(git describe --tags --always --dirty)" \
#   --build-arg COMMIT="$(git rev-parse HEAD)" --build-arg DATE=...
ARG VERSION=dev
ARG COMMIT=unknown
ARG DATE=unknown
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.buildVersion=${VERSION} -X main.buildCommit=${COMMIT} -X main.buildDate=${DATE}" \
      -o /out/usr/local/bin/toolfold ./cmd/toolfold
# What an empty image lacks: a user to run as (uid 65532, "nonroot", as in
# distroless images), a writable /tmp for the tool-list cache, and the CA
# certificates that HTTPS upstreams are checked against.
RUN mkdir -p /out/etc/ssl/certs /out/etc/toolfold /out/tmp && chmod 1777 /out/tmp \
 && cp /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/ \
 && echo 'nonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin' > /out/etc/passwd \
 && echo 'nonroot:x:65532:' > /out/etc/group

FROM scratch
COPY --from=build /out/ /
USER nonroot
# ./toolfold.json (or .yaml) is looked for here: mount the config into it.
WORKDIR /etc/toolfold
ENV TOOLFOLD_CACHE_DIR=/tmp/toolfold-cache
EXPOSE 8080
ENTRYPOINT ["toolfold"]
CMD ["serve", "--http", "0.0.0.0:8080"]
