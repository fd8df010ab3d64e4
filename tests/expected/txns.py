"""Rows of the v9 "txns" tables (``sample_table/*/v9_txns_*`` and ``v9_lance_txns_*``,
not ``v9_txns_simple_overwrite``), whose .sql files INSERT the same rows and run the
same UPDATEs. ``txn_datetime`` (TIMESTAMP) is not checked: its stored UTC value depends
on the writer's session time zone, which the SQL does not state."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Literal

from tests.expected.model import Columns

# fmt: off
INSERTED = {
    # txn_id: (account_id, txn_ts, txn_date, amount, currency, txn_type, merchant_name,
    #          is_international, fee_amount, txn_metadata, region)
    # INSERT TXN-001..008 (statement 0)
    "TXN-001": ("ACC-A", 1700000000001, "2024-01-15", "1250.00", "USD", "debit", "Amazon", False, "0.00",
                '{"category":"retail","mcc":"5411","risk_score":0.05}', "us"),
    "TXN-002": ("ACC-B", 1700000000002, "2024-01-15", "89.99", "USD", "debit", "Netflix", False, "0.00",
                '{"category":"subscription","mcc":"4899","risk_score":0.02}', "us"),
    "TXN-003": ("ACC-A", 1700000000003, "2024-01-15", "5000.00", "USD", "transfer", None, False, "25.00",
                '{"category":"transfer","mcc":"4829","risk_score":0.15}', "us"),
    "TXN-004": ("ACC-C", 1700000000004, "2024-01-15", "450.75", "EUR", "debit", "Zalando", False, "0.00",
                '{"category":"retail","mcc":"5651","risk_score":0.03}', "eu"),
    "TXN-005": ("ACC-D", 1700000000005, "2024-01-15", "2100.00", "GBP", "credit", "Salary Deposit", False, "0.00",
                '{"category":"income","mcc":"6011","risk_score":0.01}', "eu"),
    "TXN-006": ("ACC-C", 1700000000006, "2024-01-15", "175.50", "EUR", "debit", "Lufthansa", True, "3.50",
                '{"category":"travel","mcc":"3000","risk_score":0.08}', "eu"),
    "TXN-007": ("ACC-E", 1700000000007, "2024-01-16", "8900.00", "USD", "debit", "Singapore Airlines", True, "45.00",
                '{"category":"travel","mcc":"3000","risk_score":0.12}', "apac"),
    "TXN-008": ("ACC-F", 1700000000008, "2024-01-16", "320.25", "USD", "debit", "Grab", False, "0.00",
                '{"category":"transport","mcc":"4121","risk_score":0.04}', "apac"),
    # INSERT TXN-009, 010
    "TXN-009": ("ACC-G", 1700400000009, "2024-01-17", "1500.00", "EUR", "debit", "IKEA", False, "0.00",
                '{"category":"retail","mcc":"5712","risk_score":0.04}', "eu"),
    "TXN-010": ("ACC-H", 1700400000010, "2024-01-17", "2200.00", "EUR", "transfer", None, False, "15.00",
                '{"category":"transfer","mcc":"4829","risk_score":0.10}', "eu"),
    # INSERT TXN-011, 012 (INSERT OVERWRITE ... PARTITION (region = 'eu') on the
    # partitioned non-Lance tables)
    "TXN-011": ("ACC-I", 1700500000011, "2024-01-18", "999.99", "EUR", "debit", "MediaMarkt", False, "0.00",
                '{"category":"electronics","mcc":"5732","risk_score":0.06}', "eu"),
    "TXN-012": ("ACC-J", 1700500000012, "2024-01-18", "350.00", "GBP", "debit", "British Airways", True, "7.50",
                '{"category":"travel","mcc":"3000","risk_score":0.09}', "eu"),
    # INSERT TXN-013, 014
    "TXN-013": ("ACC-K", 1700600000013, "2024-01-19", "750.00", "USD", "debit", "Best Buy", False, "0.00",
                '{"category":"electronics","mcc":"5732","risk_score":0.05}', "us"),
    "TXN-014": ("ACC-L", 1700600000014, "2024-01-19", "125.50", "USD", "debit", "Uber", False, "0.00",
                '{"category":"transport","mcc":"4121","risk_score":0.03}', "us"),
    # INSERT TXN-015, 016
    "TXN-015": ("ACC-M", 1700700000015, "2024-01-20", "4500.00", "USD", "debit", "Japan Airlines", True, "50.00",
                '{"category":"travel","mcc":"3000","risk_score":0.11}', "apac"),
    "TXN-016": ("ACC-N", 1700700000016, "2024-01-20", "88.00", "USD", "debit", "GrabFood", False, "0.00",
                '{"category":"food","mcc":"5812","risk_score":0.02}', "apac"),
    # INSERT TXN-017, 018 (partitioned non-Lance tables only, after clustering)
    "TXN-017": ("ACC-O", 1700800000017, "2024-01-21", "199.99", "USD", "debit", "Apple Store", False, "0.00",
                '{"category":"electronics","mcc":"5732","risk_score":0.04}', "us"),
    "TXN-018": ("ACC-P", 1700800000018, "2024-01-21", "55.00", "EUR", "debit", "Spotify", False, "0.00",
                '{"category":"subscription","mcc":"4899","risk_score":0.01}', "eu"),
}
# fmt: on

# UPDATE ... SET txn_type = 'reversal', txn_ts = 1700100000001 WHERE txn_id = 'TXN-001'
TXN_001_UPDATED = {"txn_type": "reversal", "txn_ts": 1700100000001}
# UPDATE ... SET amount = 2500.00, txn_ts = 1700200000005 WHERE txn_id = 'TXN-005'
TXN_005_UPDATED = {"amount": Decimal("2500.00"), "txn_ts": 1700200000005}
# UPDATE ... SET fee_amount = 75.00, txn_ts = 1700300000007 WHERE txn_id = 'TXN-007'
TXN_007_UPDATED = {"fee_amount": Decimal("75.00"), "txn_ts": 1700300000007}

# How a table lays the rows out:
# - "simple": primaryKey txn_id, PARTITIONED BY (region), hive style ("region=us");
# - "complex": primaryKey 'txn_id,account_id' (keys "txn_id:TXN-001,account_id:ACC-A"),
#   partitioned as "simple";
# - "nonpart": primaryKey txn_id, no partitions and no region column.
Layout = Literal["simple", "complex", "nonpart"]


def txns(numbers: Iterable[int], changes: Mapping[int, Columns] | None = None, *, layout: Layout) -> dict[str, Columns]:
    """Expected rows by txn_id: TXN-<n> for each of ``numbers`` as inserted, with
    ``changes`` (n -> columns, e.g. an UPDATE) applied."""
    changes = changes or {}
    rows = {}
    for n in numbers:
        txn_id = f"TXN-{n:03d}"
        account, ts, date, amount, currency, txn_type, merchant, intl, fee, metadata, region = INSERTED[txn_id]
        row: Columns = {
            "txn_id": txn_id,
            "account_id": account,
            "txn_ts": ts,
            "txn_date": datetime.date.fromisoformat(date),
            "amount": Decimal(amount),
            "currency": currency,
            "txn_type": txn_type,
            "merchant_name": merchant,
            "is_international": intl,
            "fee_amount": Decimal(fee),
            "txn_metadata": metadata,
        }
        if layout == "nonpart":
            row["_hoodie_record_key"] = txn_id
            row["_hoodie_partition_path"] = ""
        else:
            row["region"] = region
            row["_hoodie_partition_path"] = f"region={region}"
            row["_hoodie_record_key"] = txn_id if layout == "simple" else f"txn_id:{txn_id},account_id:{account}"
        rows[txn_id] = {**row, **changes.get(n, {})}
    return rows
