# Sourced by every bin/freqcap-* launcher: finds the build, then runs one main class the same way
# for all tools (FREQCAP_JAVA_OPTS, the same logging, the module opens Flink's JVMs get).
#   freqcap_launch NAME DEFAULT_JAVA_OPTS MAIN_CLASS [ARGS...]
# Build first: mvn -q -DskipTests package

freqcap_home="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
freqcap_lib="$freqcap_home/job/target/freqcap-local/lib"
freqcap_jar="$(ls "$freqcap_home"/job/target/original-freqcap-job-*.jar 2>/dev/null | head -n 1 || true)"
freqcap_shaded="$(ls "$freqcap_home"/job/target/freqcap-job-*.jar 2>/dev/null | grep -v original | head -n 1 || true)"

freqcap_launch() {
  local name="$1" default_opts="$2" main="$3"
  shift 3
  if [ -z "$freqcap_jar" ] || [ -z "$freqcap_shaded" ] || [ ! -d "$freqcap_lib" ]; then
    echo "$name: build first: mvn -q -DskipTests package" >&2
    exit 2
  fi
  # The module opens Flink's own distribution passes to its JVMs on Java 17.
  local opens="--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
--add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
--add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
--add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED"
  # shellcheck disable=SC2086 # options are words
  exec java ${FREQCAP_JAVA_OPTS:-$default_opts} $opens \
    -Dlog4j.configurationFile="$freqcap_home/deploy/log4j-local.properties" \
    -cp "$freqcap_jar:$freqcap_lib/*" "$main" "$@"
}
