// The benchmarks' message: an order event of about 200 bytes of JSON.
export const payloadOf = (i: number) =>
  `{"orderId":"O-${i}","customer":"cust-${i % 977}","amount":${(i % 10000) / 100},"currency":"EUR","items":[{"sku":"SKU-${i % 313}","qty":${1 + (i % 5)}}],"note":"benchmark payload of about two hundred bytes"}`;
