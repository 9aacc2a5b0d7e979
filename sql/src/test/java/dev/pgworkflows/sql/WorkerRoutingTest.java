package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Workers declare labels; a workflow requires or prefers labels of the workers that take its tasks,
 * a step hands its task to a lane of workers with the labels it needs, and a sticky run's tasks go
 * to the worker that served it until the registry stops listing that worker.
 */
class WorkerRoutingTest {

  /** The tasks of {@code wf} a poll by {@code worker} with {@code labels} (JSON) takes. */
  private static List<Held> poll(Connection c, String wf, String worker, String labels)
      throws SQLException {
    List<Held> out = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT run_id, msg_id, receipt FROM queue.workflow_poll(?, '{1}', 10, 60, NULL, NULL,"
                + " ?, ?::jsonb)")) {
      ps.setString(1, wf);
      ps.setString(2, worker);
      ps.setString(3, labels);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new Held(rs.getLong(1), rs.getLong(2), rs.getLong(3)));
        }
      }
    }
    return out;
  }

  /** Lists a worker of {@code wf} (version 1) with {@code labels} as server s1 saw it just now. */
  private static void seen(Connection c, String wf, String worker, String labels)
      throws SQLException {
    exec(
        c,
        "SELECT queue.worker_report('s1', '[{\"id\": \""
            + worker
            + "\", \"workflow\": \""
            + wf
            + "\", \"host\": \"h\", \"versions\": [1], \"slots\": 4, \"mode\": \"poll\","
            + " \"agoMs\": 0, \"labels\": "
            + labels
            + "}]', '[]')");
  }

  private static void gone(Connection c, String wf, String worker) throws SQLException {
    exec(
        c,
        "SELECT queue.worker_report('s1', '[]', '[{\"id\": \""
            + worker
            + "\", \"workflow\": \""
            + wf
            + "\"}]')");
  }

  private static long start(Connection c, String wf) throws SQLException {
    return Long.parseLong(query(c, "SELECT run_id FROM queue.workflow_start('" + wf + "', '1')"));
  }

  private static String blockers(Connection c, String wf, long run) throws SQLException {
    return query(c, "SELECT queue.workflow_blockers('" + wf + "', " + run + ")::text");
  }

  @Test
  void requiredLabelsKeepTasksFromWorkersWithoutThem() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_worker_routing('render', '{\"gpu\": \"true\"}', NULL)");
      long run = start(c, "render");
      seen(c, "render", "cpu-1", "{}");
      assertThat(poll(c, "render", "cpu-1", null)).isEmpty();
      assertThat(poll(c, "render", "cpu-1", "{\"gpu\": \"false\"}")).isEmpty();
      assertThat(blockers(c, "render", run))
          .contains("\"kind\": \"no_worker_with_labels\"")
          .contains("\"labels\": {\"gpu\": \"true\"}");
      assertThat(poll(c, "render", "gpu-1", "{\"gpu\": \"true\", \"region\": \"eu\"}"))
          .extracting(Held::run)
          .containsExactly(run);
    }
  }

  @Test
  void preferredLabelsGoFirstWhileSuchAWorkerIsListed() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_worker_routing('report', NULL, '{\"region\": \"eu\"}')");
      start(c, "report");
      seen(c, "report", "eu-1", "{\"region\": \"eu\"}");
      assertThat(poll(c, "report", "us-1", "{\"region\": \"us\"}")).isEmpty();
      assertThat(poll(c, "report", "eu-1", "{\"region\": \"eu\"}")).hasSize(1);
      gone(c, "report", "eu-1");
      long second = start(c, "report");
      assertThat(poll(c, "report", "us-1", "{\"region\": \"us\"}"))
          .extracting(Held::run)
          .containsExactly(second);
    }
  }

  @Test
  void aStepHandsItsTaskToTheLaneOfItsLabelsUncounted() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long run = start(c, "train");
      Held h = poll(c, "train", "cpu-1", null).get(0);
      seen(c, "train", "cpu-1", "{}");
      assertThat(
              query(
                  c,
                  "SELECT queue.workflow_route("
                      + h.run()
                      + ", "
                      + h.msg()
                      + ", "
                      + h.receipt()
                      + ", '{\"gpu\": \"a100\"}')"))
          .isEqualTo("routed");
      assertThat(poll(c, "train", "cpu-1", null)).isEmpty();
      assertThat(blockers(c, "train", run)).contains("\"kind\": \"no_worker_with_labels\"");
      assertThat(
              rows(
                  c,
                  "SELECT run_id || ':' || attempt FROM queue.workflow_poll('train', '{1}', 10, 60,"
                      + " NULL, NULL, 'gpu-1', '{\"gpu\": \"a100\"}')"))
          .containsExactly(run + ":1");
    }
  }

  @Test
  void aStepThatPrefersLabelsRunsWhereItIsWhenNoWorkerHasThem() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      start(c, "resize");
      Held h = poll(c, "resize", "cpu-1", null).get(0);
      String route =
          "SELECT queue.workflow_route("
              + h.run()
              + ", "
              + h.msg()
              + ", "
              + h.receipt()
              + ", '{\"gpu\": \"true\"}', true)";
      assertThat(query(c, route)).isEqualTo("run_here");
      seen(c, "resize", "gpu-1", "{\"gpu\": \"true\"}");
      assertThat(query(c, route)).isEqualTo("routed");
      assertThat(query(c, route)).isEqualTo("stale");
    }
  }

  @Test
  void aStickyRunsTasksGoToItsWorkerUntilTheRegistryLetsItGo() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_worker_routing('cache', NULL, NULL, true)");
      seen(c, "cache", "a", "{}");
      seen(c, "cache", "b", "{}");
      long run = start(c, "cache");
      Held h = poll(c, "cache", "a", null).get(0);
      assertThat(query(c, "SELECT sticky_worker FROM queue.workflow_run WHERE run_id = " + run))
          .isEqualTo("a");
      // The step's next task (due at once) waits for worker a alone.
      assertThat(complete(c, h, "warm", "'{\"delayMs\": 0}'", "NULL", "60")).startsWith("ok");
      assertThat(poll(c, "cache", "b", null)).isEmpty();
      assertThat(blockers(c, "cache", run))
          .contains("\"kind\": \"sticky\"")
          .contains("\"worker\": \"a\"");
      h = poll(c, "cache", "a", null).get(0);
      assertThat(complete(c, h, "use", "'{\"delayMs\": 0}'", "NULL", "60")).startsWith("ok");
      // Worker a leaves: the run's task goes to any worker, and sticks to the one that takes it.
      gone(c, "cache", "a");
      assertThat(poll(c, "cache", "b", null)).extracting(Held::run).containsExactly(run);
      assertThat(query(c, "SELECT sticky_worker FROM queue.workflow_run WHERE run_id = " + run))
          .isEqualTo("b");
    }
  }

  @Test
  void aWorkerNotSeenForTheExpiryLetsItsRunsGo() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_worker_routing('cache', NULL, NULL, true)");
      seen(c, "cache", "a", "{}");
      long run = start(c, "cache");
      Held h = poll(c, "cache", "a", null).get(0);
      complete(c, h, "warm", "'{\"delayMs\": 0}'", "NULL", "60");
      exec(c, "UPDATE queue.worker_seen SET last_seen = now() - interval '1 minute'");
      assertThat(query(c, "SELECT queue.worker_expire(30000)")).isEqualTo("1");
      assertThat(poll(c, "cache", "b", null)).extracting(Held::run).containsExactly(run);
    }
  }

  @Test
  void startsAreNotHandedToPollsOfARoutedWorkflow() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_worker_routing('render', '{\"gpu\": \"true\"}', NULL)");
      assertThat(
              rows(
                  c,
                  "SELECT (msg_id IS NULL)::text FROM queue.workflow_start_leased('render',"
                      + " '[{\"input\": 1}]', '{1}', 1, 30)"))
          .containsExactly("true");
      assertThat(poll(c, "render", "gpu-1", "{\"gpu\": \"true\"}")).hasSize(1);
    }
  }

  @Test
  void badLabelsAreRefusedNamingTheFieldAndChangeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_worker_routing('render', '{\"gpu\": \"true\"}', NULL)");
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.set_worker_routing('render', '{\"GPU\": \"x\"}', NULL)"))
          .hasMessageContaining("require has a label name \"GPU\"");
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.set_worker_routing('render', NULL, '{\"gpu\": 1}')"))
          .hasMessageContaining("prefer.gpu must be a string");
      assertThatThrownBy(() -> exec(c, "SELECT queue.set_worker_routing('render', '{}', NULL)"))
          .hasMessageContaining("require must be an object of 1 to 20 labels");
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.set_worker_routing('render', '[\"gpu\"]', NULL)"))
          .hasMessageContaining("require must be an object");
      assertThat(query(c, "SELECT require::text FROM queue.worker_routing_of('render')"))
          .isEqualTo("{\"gpu\": \"true\"}");
      long run = start(c, "render");
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.workflow_route(" + run + ", 1, 1, '{\"gpu\": \"\"}')"))
          .hasMessageContaining("labels.gpu must be a string");
    }
  }
}
