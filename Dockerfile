# Build with the same wrapper the README uses, then run the server on a JRE.
FROM eclipse-temurin:17-jdk AS build
WORKDIR /src
COPY . .
# The server jar only: no sources or javadoc jars.
RUN ./mvnw -B -q -DskipTests -Dmaven.source.skip -Dmaven.javadoc.skip -pl queue-server -am package

FROM eclipse-temurin:17-jre
RUN useradd --system --uid 10001 pgworkflows && mkdir -p /data && chown pgworkflows /data
COPY --from=build /src/queue-server/target/queue-server.jar /app/queue-server.jar
USER pgworkflows
# Every interface, or the published port reaches nothing; so the server refuses to start
# without WORKFLOWS_API_TOKENS.
ENV WORKFLOWS_PORT=7700 \
    WORKFLOWS_BIND=0.0.0.0 \
    WORKFLOWS_DATA_DIR=/data
EXPOSE 7700
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD bash -c 'exec 3<>/dev/tcp/127.0.0.1/7700 && printf "GET /readyz HTTP/1.0\r\n\r\n" >&3 && head -1 <&3 | grep -q " 200"'
ENTRYPOINT ["java", "-XX:+UseContainerSupport", "-jar", "/app/queue-server.jar"]
