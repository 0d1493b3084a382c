import fc from "fast-check";

/** Strings shaped like ISO dates, valid or off in any one part, and a few of any shape. */
export const dateLikeString: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(fc.date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true }), fc.nat(2))
    .map(([date, form]) => {
      const iso = date.toISOString();
      return form === 0 ? iso : form === 1 ? `${iso.slice(0, 19)}Z` : iso.slice(0, 10);
    }),
  fc
    .tuple(
      fc.oneof(fc.constantFrom("0000", "0099", "0100", "1900", "2000", "2023", "2024", "2100", "9999"), fc.stringMatching(/^\d{4}$/)),
      fc.constantFrom("00", "01", "02", "04", "09", "11", "12", "13", "1"),
      fc.constantFrom("00", "01", "28", "29", "30", "31", "32", "1"),
      fc.option(
        fc.tuple(
          fc.constantFrom("00", "09", "23", "24", "7"),
          fc.constantFrom("00", "59", "60"),
          fc.constantFrom("00", "59", "60"),
          fc.constantFrom("", ".123", ".12", ".1234"),
          fc.constantFrom("Z", "z", "", "+00:00"),
        ),
        { nil: undefined },
      ),
    )
    .map(([year, month, day, time]) => {
      const date = `${year}-${month}-${day}`;
      if (time === undefined) return date;
      const [hour, minute, second, fraction, zone] = time;
      return `${date}T${hour}:${minute}:${second}${fraction}${zone}`;
    }),
  fc.string({ maxLength: 12 }),
  fc.constantFrom("2024-01-01\n", "2024-01-01T00:00:00Z\n", " 2024-01-01", "٢٠٢٤-٠١-٠١", "2024-01-01 00:00:00Z"),
);
