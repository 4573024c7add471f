package io.freqcap.operators.capping;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.Rule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The limits an {@link EdgeRun} checks its ledger against, read from the contract rather than from
 * the job's rule: a plain oracle of over-admission.
 */
final class EdgeLimits {
    private final BiConsumer<String, String> soft;

    private EdgeLimits(BiConsumer<String, String> soft) {
        this.soft = soft;
    }

    /**
     * The decision rule's promise (§6), for every limit kind: each counted message was admitted
     * against every message counted before it (in the order the outputs said so) that still counts,
     * under the rule of the config and segment it was decided with. So, over those and it: no
     * interval of a rolling limit's window containing its time holds more than the limit's max
     * (every message, a channel's, a category's, a campaign's), its calendar period (day, ISO week,
     * month, each entry's local date in its own zone) holds no more than a calendar limit's max,
     * and no interval or period holds more distinct campaigns than a {@code campaigns} limit
     * allows. A max lowered by fatigue or a reserve only lowers what may be admitted: the config's
     * max bounds it. Messages counted under other configs count too, unless a config in force kept
     * less history than the limits need (§6: a longer limit sees what the shorter kept and no
     * more): then only those of the same config.
     */
    static void check(EdgeLedger ledger, BiConsumer<String, String> soft) {
        new EdgeLimits(soft).checkAll(ledger);
    }

    private void checkAll(EdgeLedger ledger) {
        long keptByAll = Long.MAX_VALUE;
        for (LimitConfig c : ledger.configs.values()) {
            keptByAll = Math.min(keptByAll, c.keptWindowMillis());
        }
        for (Map.Entry<Long, List<EdgeLedger.Counted>> e : ledger.counted.entrySet()) {
            List<EdgeLedger.Counted> all = e.getValue();
            for (int i = 0; i < all.size(); i++) {
                EdgeLedger.Counted m = all.get(i);
                LimitConfig config = ledger.configs.get(m.configVersion());
                if (config == null) {
                    continue;
                }
                boolean acrossConfigs = keptByAll >= config.longestWindowMillis();
                List<EdgeLedger.Counted> before = new ArrayList<>(i + 1);
                for (int j = 0; j <= i; j++) {
                    EdgeLedger.Counted c = all.get(j);
                    if (acrossConfigs || c.configVersion() == m.configVersion()) {
                        before.add(c);
                    }
                }
                admitted(e.getKey(), m, config.ruleFor(m.segment()), before);
                lifetime(e.getKey(), m, config.ruleFor(m.segment()), all.subList(0, i + 1), ledger);
            }
        }
    }

    /**
     * §3: a message of a campaign under a rule with lifetime limits was admitted against the user's
     * messages of the campaign counted since lifetime counts are kept and since the last {@code
     * end-campaign}, so they and it are no more than each limit's max. Checked where no count can
     * have started afresh (they and their send times lie within the retention) and no un-count took
     * one the ledger never had.
     */
    private void lifetime(
            long user,
            EdgeLedger.Counted m,
            Rule rule,
            List<EdgeLedger.Counted> upToIt,
            EdgeLedger ledger) {
        if (m.campaign() == null
                || rule.caps().lifetime().isEmpty()
                || m.seq() < ledger.countingFrom
                || ledger.uncountedAcross.contains(user + " " + m.campaign())) {
            return;
        }
        long ended = ledger.endedBefore(m.campaign(), m.seq());
        List<EdgeLedger.Counted> counted =
                upToIt.stream()
                        .filter(
                                c ->
                                        m.campaign().equals(c.campaign())
                                                && c.seq() >= ledger.countingFrom
                                                && c.seq() >= ended)
                        .toList();
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (EdgeLedger.Counted c : counted) {
            first = Math.min(first, Math.min(c.timestamp(), c.at()));
            last = Math.max(last, Math.max(c.timestamp(), c.at()));
        }
        if (last - first >= ledger.lifetimeRetention) {
            return; // a count may have started afresh in between
        }
        for (Limit l : rule.caps().lifetime()) {
            if (counted.size() > l.max()) {
                overAdmitted(
                        user, m, "lifetime campaign:" + m.campaign(), l, counted.size(), counted);
                return;
            }
        }
    }

    /** {@code m} (the last of {@code before}) within every limit of its rule. */
    private void admitted(
            long user, EdgeLedger.Counted m, Rule rule, List<EdgeLedger.Counted> before) {
        within(user, m, rule.caps().all(), before, "all");
        if (rule.caps().channels().containsKey(m.channel())) {
            within(
                    user,
                    m,
                    rule.channelLimits(m.channel()),
                    before.stream().filter(c -> m.channel().equals(c.channel())).toList(),
                    "channel:" + m.channel());
        }
        if (m.category() != null && rule.caps().categories().containsKey(m.category())) {
            within(
                    user,
                    m,
                    rule.categoryLimits(m.category()),
                    before.stream().filter(c -> m.category().equals(c.category())).toList(),
                    "category:" + m.category());
        }
        if (m.campaign() != null) {
            within(
                    user,
                    m,
                    rule.caps().campaign(),
                    before.stream().filter(c -> m.campaign().equals(c.campaign())).toList(),
                    "campaign:" + m.campaign());
            List<EdgeLedger.Counted> withCampaign =
                    before.stream().filter(c -> c.campaign() != null).toList();
            for (Limit l : rule.caps().campaigns()) {
                int most = l.isCalendar() ? campaignsInPeriod(l, m, withCampaign) : 0;
                if (!l.isCalendar()) {
                    for (long s : starts(m.at(), l.windowMillis(), withCampaign)) {
                        java.util.Set<String> in = new java.util.HashSet<>();
                        for (EdgeLedger.Counted c : withCampaign) {
                            if (c.at() >= s && c.at() - s < l.windowMillis()) {
                                in.add(c.campaign());
                            }
                        }
                        most = Math.max(most, in.size());
                    }
                }
                if (most > l.max()) {
                    overAdmitted(user, m, "campaigns", l, most, withCampaign);
                }
            }
        }
    }

    private int campaignsInPeriod(Limit l, EdgeLedger.Counted m, List<EdgeLedger.Counted> entries) {
        long period = period(l.calendar(), m);
        java.util.Set<String> in = new java.util.HashSet<>();
        for (EdgeLedger.Counted c : entries) {
            if (period(l.calendar(), c) == period) {
                in.add(c.campaign());
            }
        }
        return in.size();
    }

    /**
     * The interval starts that matter for a time t (the entries in (t - w, t], and t): the fullest
     * interval containing t starts at one of them.
     */
    private static List<Long> starts(long t, long w, List<EdgeLedger.Counted> entries) {
        List<Long> out = new ArrayList<>();
        out.add(t);
        for (EdgeLedger.Counted c : entries) {
            if (c.at() <= t && t - c.at() < w) {
                out.add(c.at());
            }
        }
        return out;
    }

    /**
     * The period of a calendar limit holding a counted message, by its local date: the epoch day,
     * the ISO week (Monday 00:00 on) or the month.
     */
    private static long period(String calendar, EdgeLedger.Counted c) {
        long day = Math.floorDiv(c.at() + c.offsetSeconds() * 1000L, 86_400_000L);
        return switch (calendar) {
            case "day" -> day;
            case "week" -> Math.floorDiv(day + 3, 7); // 1970-01-01 was a Thursday
            default -> {
                java.time.LocalDate d = java.time.LocalDate.ofEpochDay(day);
                yield d.getYear() * 12L + d.getMonthValue();
            }
        };
    }

    private void within(
            long user,
            EdgeLedger.Counted m,
            List<Limit> limits,
            List<EdgeLedger.Counted> scope,
            String what) {
        for (Limit l : limits) {
            int most = 0;
            if (l.isCalendar()) {
                long p = period(l.calendar(), m);
                for (EdgeLedger.Counted c : scope) {
                    most += period(l.calendar(), c) == p ? 1 : 0;
                }
            } else {
                for (long s : starts(m.at(), l.windowMillis(), scope)) {
                    int in = 0;
                    for (EdgeLedger.Counted c : scope) {
                        in += c.at() >= s && c.at() - s < l.windowMillis() ? 1 : 0;
                    }
                    most = Math.max(most, in);
                }
            }
            if (most > l.max()) {
                overAdmitted(user, m, what, l, most, scope);
                return;
            }
        }
    }

    private void overAdmitted(
            long user,
            EdgeLedger.Counted m,
            String what,
            Limit l,
            int most,
            List<EdgeLedger.Counted> scope) {
        soft.accept(
                "more counted in a window than its limit",
                "user "
                        + user
                        + ", "
                        + m.messageId()
                        + " at "
                        + m.at()
                        + " under v"
                        + m.configVersion()
                        + ", scope "
                        + what
                        + ", "
                        + (l.isCalendar() ? l.calendar() : l.window())
                        + " max "
                        + l.max()
                        + ": "
                        + most
                        + " with those counted before it: "
                        + scope);
    }
}
