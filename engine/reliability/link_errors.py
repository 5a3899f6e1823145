"""Link errors: what a link's bit error ratio leaves after its FEC, and how it is recovered.

Every 100 Gb/s-per-lane PAM4 link (Ethernet 802.3ck/df, InfiniBand NDR/XDR) carries an
RS(544,514) "KP4" Reed-Solomon code: a 5,440-bit codeword of 544 ten-bit symbols corrects up
to 15 wrong symbols. With independent bit errors at the pre-FEC ratio ``b`` a symbol is wrong
with probability ``q = 1 - (1 - b)^10`` and a codeword is lost when more than 15 of its 544
symbols are wrong, a binomial tail; a packet is lost when any codeword it spans is. That
post-FEC packet loss per link is what the transport already models as
``fabric.packet_loss_rate`` (per link crossed), recovered by its ``loss_recovery``: an
InfiniBand link resends the packet from its replay buffer (``link-retransmit``); Ethernet
has no link-level retry (IEEE 802.3), so a RoCE NIC resends end to end (go-back-N or
selective repeat). The figures (code, BER limit, FEC latency, link retry) are the catalog's
``link-fec`` profile. Burst errors (DFE error propagation) make real codewords fail more
often than the independent-error tail says; the result is a lower bound on the loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.catalog.devices import Catalog

PROFILE = "link-fec"


@dataclass(frozen=True)
class FecCode:
    """A Reed-Solomon code: `symbols` per codeword, `data_symbols` of them data, each
    `symbol_bits` wide; up to `correctable_symbols` wrong symbols are corrected."""

    name: str
    symbols: int
    data_symbols: int
    symbol_bits: int
    correctable_symbols: int

    @property
    def data_bits(self) -> int:
        """Payload bits one codeword carries."""
        return self.data_symbols * self.symbol_bits


@dataclass(frozen=True)
class LinkProfile:
    """The link-error figures of one technology's links (catalog ``link-fec``)."""

    code: FecCode
    pre_fec_ber_limit: float
    operating_pre_fec_ber: float
    fec_latency_ns: float
    link_retry: bool


def link_profile(catalog: Catalog, technology: str) -> LinkProfile:
    """The FEC code, BER limit, default BER, FEC latency and link retry of `technology`'s
    links (``infiniband`` or ``roce``) from the catalog's ``link-fec`` profile."""
    entry = catalog.technology(PROFILE)
    code = dict(entry.value("fec_code"))
    retry = "infiniband_link_retry" if technology == "infiniband" else "ethernet_link_retry"
    return LinkProfile(
        code=FecCode(
            name=str(code["name"]),
            symbols=int(code["symbols"]),
            data_symbols=int(code["data_symbols"]),
            symbol_bits=int(code["symbol_bits"]),
            correctable_symbols=int(code["correctable_symbols"]),
        ),
        pre_fec_ber_limit=float(entry.value("pre_fec_ber_limit")),
        operating_pre_fec_ber=float(entry.value("operating_pre_fec_ber")),
        fec_latency_ns=float(entry.value("fec_latency_ns")),
        link_retry=bool(entry.value(retry)),
    )


def codeword_loss_probability(pre_fec_ber: float, code: FecCode) -> float:
    """Probability that a codeword has more wrong symbols than the code corrects, with
    independent bit errors at `pre_fec_ber`: ``P(X > t)``, ``X ~ Binomial(n, q)``,
    ``q = 1 - (1 - ber)^m``. Exactly 0 at a BER of 0; summed in log space so that tails
    of 1e-30 stay accurate."""
    if not 0.0 <= pre_fec_ber < 1.0:
        raise ValueError(f"a bit error ratio lies in [0, 1), not {pre_fec_ber!r}")
    if pre_fec_ber == 0.0:
        return 0.0
    q = -math.expm1(code.symbol_bits * math.log1p(-pre_fec_ber))
    n, t = code.symbols, code.correctable_symbols
    if q >= 1.0:
        return 1.0
    log_q, log_p = math.log(q), math.log1p(-q)
    terms = [
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * log_q
        + (n - k) * log_p
        for k in range(t + 1, n + 1)
    ]
    top = max(terms)
    tail = math.exp(top) * math.fsum(math.exp(x - top) for x in terms)
    return min(1.0, tail)


def codewords_per_packet(packet_bytes: float, code: FecCode) -> int:
    """Codewords a packet of `packet_bytes` on the wire spans, at least: ceil(bits / data
    bits per codeword). A packet that starts mid-codeword spans one more; the count is the
    lower bound."""
    return max(1, math.ceil(packet_bytes * 8 / code.data_bits))


def packet_loss_per_link(pre_fec_ber: float, packet_bytes: float, code: FecCode) -> float:
    """Probability that one link loses a packet of `packet_bytes` after its FEC:
    ``1 - (1 - P_codeword)^codewords``."""
    p_cw = codeword_loss_probability(pre_fec_ber, code)
    if p_cw == 0.0:
        return 0.0
    return -math.expm1(codewords_per_packet(packet_bytes, code) * math.log1p(-p_cw))


def combined_loss(set_loss: float, link_loss: float) -> float:
    """A link's packet loss from two independent causes: ``1 - (1 - a)(1 - b)``; exactly
    `set_loss` when `link_loss` is 0."""
    if link_loss == 0.0:
        return set_loss
    return 1.0 - (1.0 - set_loss) * (1.0 - link_loss)


def expected_losses(packets: float, links_crossed: float, link_loss: float) -> float:
    """Expected packets lost when `packets` packets each cross `links_crossed` links that
    each lose one with probability `link_loss`: ``packets x (1 - (1 - p)^links)``."""
    if link_loss == 0.0 or packets <= 0:
        return 0.0
    return packets * -math.expm1(links_crossed * math.log1p(-link_loss))
