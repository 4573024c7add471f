package io.freqcap.schema.config;

/**
 * What a limit counts (contract.md §3): every counted message of the user, or those of one channel,
 * one category or one campaign.
 *
 * @param name the channel, category or campaignId; null for {@link Kind#ALL}
 */
public record Scope(Kind kind, String name) {
    public enum Kind {
        ALL,
        CHANNEL,
        CATEGORY,
        CAMPAIGN
    }

    public static final Scope ALL = new Scope(Kind.ALL, null);

    public static Scope channel(String name) {
        return new Scope(Kind.CHANNEL, name);
    }

    public static Scope category(String name) {
        return new Scope(Kind.CATEGORY, name);
    }

    public static Scope campaign(String id) {
        return new Scope(Kind.CAMPAIGN, id);
    }

    // Written out: a record's generated equals goes through method handles, and the decision
    // compares scopes for every limit of every message.
    @Override
    public boolean equals(Object o) {
        return this == o
                || (o instanceof Scope s
                        && kind == s.kind
                        && (name == null ? s.name == null : name.equals(s.name)));
    }

    @Override
    public int hashCode() {
        return 31 * kind.hashCode() + (name == null ? 0 : name.hashCode());
    }

    /** Whether a message of this channel, category and campaign (or none) counts here. */
    public boolean matches(String channel, String category, String campaign) {
        return switch (kind) {
            case ALL -> true;
            case CHANNEL -> name.equals(channel);
            case CATEGORY -> name.equals(category);
            case CAMPAIGN -> name.equals(campaign);
        };
    }

    /** As a violation names it: {@code all}, {@code channel:<name>}, ... */
    public String label() {
        return switch (kind) {
            case ALL -> "all";
            case CHANNEL -> "channel:" + name;
            case CATEGORY -> "category:" + name;
            case CAMPAIGN -> "campaign:" + name;
        };
    }
}
