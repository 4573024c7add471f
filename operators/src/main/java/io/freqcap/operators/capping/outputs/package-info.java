/**
 * What the capping function sends, and what goes with each record: the audit topic and the Redis
 * mirror's side outputs, the one route of a decided record ({@link
 * io.freqcap.operators.capping.outputs.CappingOutputs.Sink#decided}), the metrics, and the mirror's
 * debt (a backlog Redis dropped, paid by a rebuild). With the mirror on, every ALLOWED message also
 * goes to the mirror's output; decisions never wait on Redis.
 */
package io.freqcap.operators.capping.outputs;
