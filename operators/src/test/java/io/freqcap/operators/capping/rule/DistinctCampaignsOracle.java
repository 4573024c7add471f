package io.freqcap.operators.capping.rule;

import io.freqcap.operators.capping.rule.Periods.ZoneClock;
import io.freqcap.schema.common.Zones;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link DistinctCampaigns} as it was before issue 46, kept as the spec its replacement is tested
 * and benchmarked against: every candidate time of {@link #earliest} checked on its own, each check
 * reading the entries again (quadratic in the entries with a campaign). Do not optimize: its worth
 * is that it is the straightforward reading of contract.md §6 "Distinct campaigns" the rule shipped
 * with.
 */
public final class DistinctCampaignsOracle {
    static final String SCOPE = "campaigns";

    /** The oracle for a message of campaign {@code own} in zone {@code zoneId} (benchmarks). */
    public static DistinctCampaignsOracle of(
            CountedHistory history, List<Limit> limits, String own, String zoneId) {
        return new DistinctCampaignsOracle(history, limits, own, new ZoneClock(Zones.zone(zoneId)));
    }

    private final List<Limit> limits;
    private final String own;
    private final ZoneClock zone;
    private long[] ts = new long[16];
    private int[] offsets = new int[16];
    private String[] campaigns = new String[16];
    private int n;

    /**
     * @param limits the rule's {@code campaigns} limits as the message's priority reads them
     * @param own the message's campaign
     */
    DistinctCampaignsOracle(
            CountedHistory history, List<Limit> limits, String own, ZoneClock zone) {
        this.limits = limits;
        this.own = own;
        this.zone = zone;
        history.forEachCampaign(Long.MIN_VALUE, Long.MAX_VALUE, this::add);
    }

    private void add(long timestamp, int offsetSeconds, String campaign) {
        if (n == ts.length) {
            ts = Arrays.copyOf(ts, n * 2);
            offsets = Arrays.copyOf(offsets, n * 2);
            campaigns = Arrays.copyOf(campaigns, n * 2);
        }
        ts[n] = timestamp;
        offsets[n] = offsetSeconds;
        campaigns[n++] = campaign;
    }

    /** The limits a message at {@code at} would break. */
    public List<Violation> violations(long at) {
        List<Violation> out = null;
        for (Limit l : limits) {
            int[] most = l.isCalendar() ? inPeriod(l, at) : inIntervals(l, at);
            if (most[1] > l.max()) {
                out = out == null ? new ArrayList<>(2) : out;
                out.add(Violation.of(SCOPE, l, most[0]));
            }
        }
        return out == null ? List.of() : out;
    }

    private boolean passes(long at) {
        for (Limit l : limits) {
            int[] most = l.isCalendar() ? inPeriod(l, at) : inIntervals(l, at);
            if (most[1] > l.max()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Over the intervals of {@code l}'s window containing {@code at}: the most distinct campaigns
     * any holds, and the most with the message's own.
     */
    private int[] inIntervals(Limit l, long at) {
        long w = l.windowMillis();
        int most = 0;
        int mostWithOwn = 1;
        Map<String, Integer> inWindow = new HashMap<>();
        int lo = firstAtOrAfter(at - w + 1);
        int hi = lo;
        // Starts: the entries in (at - w, at], then at itself; ascending, so both ends move on.
        for (int k = lo; k <= n; k++) {
            long s = k < n && ts[k] <= at ? ts[k] : at;
            while (lo < n && ts[lo] < s) {
                inWindow.merge(campaigns[lo], -1, (a, b) -> a + b == 0 ? null : a + b);
                lo++;
            }
            while (hi < n && ts[hi] < s + w) {
                inWindow.merge(campaigns[hi], 1, Integer::sum);
                hi++;
            }
            most = Math.max(most, inWindow.size());
            mostWithOwn =
                    Math.max(mostWithOwn, inWindow.size() + (inWindow.containsKey(own) ? 0 : 1));
            if (s == at) {
                break;
            }
        }
        return new int[] {most, mostWithOwn};
    }

    /** In {@code l}'s period holding {@code at} in the message's zone: the same two counts. */
    private int[] inPeriod(Limit l, long at) {
        long period = Periods.label(l.calendar(), at, zone.offsetAt(at));
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < n; i++) {
            if (Periods.label(l.calendar(), ts[i], offsets[i]) == period) {
                seen.add(campaigns[i]);
            }
        }
        return new int[] {seen.size(), seen.size() + (seen.contains(own) ? 0 : 1)};
    }

    private int firstAtOrAfter(long t) {
        int i = Arrays.binarySearch(ts, 0, n, t);
        if (i < 0) {
            return -i - 1;
        }
        while (i > 0 && ts[i - 1] == t) {
            i--;
        }
        return i;
    }

    /**
     * The earliest time at or after {@code from} at which every limit passes; null when none ever
     * does (a limit of 0: the message's own campaign is one too many). Passing can start only at
     * {@code from}, where an entry leaves every interval of a window, or at a period start.
     */
    public Long earliest(long from) {
        for (Limit l : limits) {
            if (l.max() == 0) {
                return null;
            }
        }
        long[] at = new long[n * limits.size() + 16];
        int k = 0;
        at[k++] = from;
        long last = n == 0 ? from : Math.max(from, ts[n - 1]);
        for (Limit l : limits) {
            if (!l.isCalendar()) {
                for (int i = 0; i < n; i++) {
                    if (ts[i] + l.windowMillis() > from) {
                        at = k == at.length ? Arrays.copyOf(at, k * 2) : at;
                        at[k++] = ts[i] + l.windowMillis();
                    }
                }
                continue;
            }
            long horizon = last + l.windowMillis();
            for (long start = from; ; ) {
                long next = Periods.nextStart(l.calendar(), start, zone);
                if (next <= start) {
                    break;
                }
                at = k == at.length ? Arrays.copyOf(at, k * 2) : at;
                at[k++] = next;
                if (next > horizon) {
                    break;
                }
                start = next;
            }
        }
        Arrays.sort(at, 0, k);
        for (int i = 0; i < k; i++) {
            if (at[i] >= from && (i == 0 || at[i] != at[i - 1]) && passes(at[i])) {
                return at[i];
            }
        }
        return null;
    }

    /**
     * The {@code retryAfter} of a message under a rule with {@code campaigns} limits and others, as
     * worked out before issue 58: each side's earliest time from the other's, until both agree (the
     * config's other limits decided by {@link CappingRule#judge} without the campaigns ones, which
     * must not change its longest window).
     */
    public static Long alternating(CountedHistory h, OutboundMessage m, String config)
            throws Exception {
        LimitConfig limits = LimitConfig.parse(config);
        LimitConfig othersOnly =
                LimitConfig.parse(config.replaceAll(",\"campaigns\":\\[[^\\]]*\\]", ""));
        var campaigns =
                DistinctCampaignsOracle.of(
                        h, limits.ruleFor("*").caps().campaigns(), m.campaignId(), "UTC");
        Long r = othersEarliest(h, m, othersOnly, m.timestamp());
        while (r != null) {
            Long c = campaigns.earliest(r);
            if (c == null || c.longValue() == r.longValue()) {
                return c;
            }
            r = othersEarliest(h, m, othersOnly, c);
        }
        return null;
    }

    private static Long othersEarliest(
            CountedHistory h, OutboundMessage m, LimitConfig othersOnly, long from) {
        OutboundMessage at =
                new OutboundMessage(
                        m.messageId(),
                        m.userId(),
                        m.channel(),
                        m.category(),
                        from,
                        m.timezone(),
                        m.campaignId(),
                        m.priority());
        Verdict v = CappingRule.judge(h, at, Judging.of(othersOnly, "*"));
        return v.decision() == Decision.ALLOWED ? Long.valueOf(from) : v.retryAfter();
    }
}
