import type { Db } from '../db/store.js';
import { withTransaction } from '../db/transaction.js';
import type { ProductCreateInput } from '../domain/products/schemas.js';
import { createProduct } from '../domain/products/products.js';
import { seedDemoAnalytics } from './demo-analytics.js';

interface Model {
  sku: string;
  name: string;
  category: string;
  price: number;
  description: string;
  features: string[];
  /** Variants: one product each, grouped by item_group_id = sku. */
  variants?: { color?: string; size?: string }[];
  extra?: Record<string, string | number>;
}

interface Brand {
  name: string;
  site: string;
  currency: string;
  models: Model[];
}

/** A GTIN-13 with a correct check digit, derived from a number. */
function gtin13(n: number): string {
  const body = `400${String(n).padStart(9, '0')}`;
  let sum = 0;
  [...body].forEach((d, i) => {
    sum += Number(d) * (i % 2 === 0 ? 1 : 3);
  });
  return body + String((10 - (sum % 10)) % 10);
}

const BRANDS: Brand[] = [
  {
    name: 'Northwind Outfitters',
    site: 'https://northwind.example',
    currency: 'USD',
    models: [
      {
        sku: 'NW-TRAIL',
        name: 'Trailhead Running Shoe',
        category: 'Apparel > Shoes > Running',
        price: 129.0,
        description:
          'A cushioned trail shoe with a grippy lug outsole and a breathable, quick-drying mesh upper.',
        features: ['Vibram outsole', '8 mm drop', 'Recycled mesh upper'],
        variants: [{ size: '9' }, { size: '10' }, { size: '11' }],
      },
      {
        sku: 'NW-CITY',
        name: 'City Walker Sneaker',
        category: 'Apparel > Shoes > Casual',
        price: 89.5,
        description: 'Leather everyday sneaker with a cork footbed that moulds to your foot.',
        features: ['Full-grain leather', 'Cork footbed'],
        variants: [
          { color: 'White', size: '9' },
          { color: 'White', size: '10' },
          { color: 'Black', size: '10' },
        ],
      },
      {
        sku: 'NW-RAIN',
        name: 'Stormline Rain Jacket',
        category: 'Apparel > Outerwear > Jackets',
        price: 179.99,
        description: 'Three-layer waterproof shell, fully taped seams, packs into its own pocket.',
        features: ['20k mm waterproof', 'Pit zips', 'Packable'],
        variants: [
          { color: 'Moss', size: 'M' },
          { color: 'Moss', size: 'L' },
          { color: 'Navy', size: 'M' },
          { color: 'Navy', size: 'L' },
        ],
      },
      {
        sku: 'NW-FLEECE',
        name: 'Ridge Fleece Pullover',
        category: 'Apparel > Outerwear > Fleece',
        price: 74.0,
        description: 'Midweight grid fleece that traps warmth and breathes on the climb.',
        features: ['Grid fleece', 'Thumb loops'],
        variants: [{ size: 'S' }, { size: 'M' }, { size: 'L' }],
      },
      {
        sku: 'NW-TEE',
        name: 'Merino Trail Tee',
        category: 'Apparel > Tops > T-Shirts',
        price: 55.0,
        description: '150 gsm merino wool tee: soft, odour-resistant, good for days on the move.',
        features: ['100% merino', 'Odour resistant'],
        variants: [{ color: 'Charcoal' }, { color: 'Rust' }],
      },
      {
        sku: 'NW-SOCK',
        name: 'Hiker Crew Socks (3-pack)',
        category: 'Apparel > Accessories > Socks',
        price: 24.0,
        description: 'Cushioned crew socks with a seamless toe. Three pairs.',
        features: ['Seamless toe', 'Merino blend'],
      },
      {
        sku: 'NW-CAP',
        name: '"Summit" Five-Panel Cap',
        category: 'Apparel > Accessories > Hats',
        price: 32.0,
        description: 'Nylon five-panel cap with a rope detail & an adjustable strap.',
        features: ['Quick dry', 'Adjustable'],
      },
      {
        sku: 'NW-SHORT',
        name: 'Switchback Hiking Shorts',
        category: 'Apparel > Bottoms > Shorts',
        price: 65.0,
        description: 'Stretch nylon shorts with a gusseted crotch and zip hand pockets.',
        features: ['4-way stretch', 'UPF 50'],
        variants: [
          { color: 'Khaki', size: '32' },
          { color: 'Khaki', size: '34' },
          { color: 'Olive', size: '32' },
        ],
      },
      {
        sku: 'NW-PACK',
        name: 'Daybreak 22 L Backpack',
        category: 'Outdoor > Bags > Backpacks',
        price: 119.0,
        description: 'A 22-litre daypack with a hydration sleeve and a ventilated back panel.',
        features: ['Hydration sleeve', 'Rain cover included'],
      },
    ],
  },
  {
    name: 'Lumen & Co.',
    site: 'https://lumen.example',
    currency: 'EUR',
    models: [
      {
        sku: 'LU-ARC',
        name: 'Arc Floor Lamp',
        category: 'Home > Lighting > Floor Lamps',
        price: 249.0,
        description: 'A brushed-brass arc lamp with a marble base; the shade swivels 180°.',
        features: ['Marble base', 'E27 bulb', 'Dimmable'],
        variants: [{ color: 'Brass' }, { color: 'Black' }],
      },
      {
        sku: 'LU-DESK',
        name: 'Task Desk Lamp',
        category: 'Home > Lighting > Desk Lamps',
        price: 89.0,
        description: 'Adjustable LED desk lamp with three colour temperatures and a USB-C port.',
        features: ['2700-6500 K', 'USB-C charging'],
      },
      {
        sku: 'LU-PEND',
        name: 'Opal Glass Pendant',
        category: 'Home > Lighting > Pendants',
        price: 139.0,
        description: 'Hand-blown opal glass globe on a braided fabric cord.',
        features: ['Hand-blown glass', '1.5 m cord'],
        variants: [{ size: '25 cm' }, { size: '35 cm' }],
      },
      {
        sku: 'LU-STRING',
        name: 'Café String Lights 10 m',
        category: 'Home > Lighting > Outdoor',
        price: 45.0,
        description: 'Weatherproof string lights with 20 shatterproof bulbs.',
        features: ['IP65', 'Shatterproof'],
      },
      {
        sku: 'LU-CANDLE',
        name: 'Cedar & Smoke Candle',
        category: 'Home > Decor > Candles',
        price: 28.0,
        description: 'Soy wax candle with notes of cedar, smoke and a little vanilla. 50 hours.',
        features: ['Soy wax', 'Cotton wick'],
      },
      {
        sku: 'LU-VASE',
        name: 'Ribbed Stoneware Vase',
        category: 'Home > Decor > Vases',
        price: 39.5,
        description: 'A ribbed stoneware vase, glazed inside so it holds water.',
        features: ['Stoneware', 'Handmade'],
        variants: [{ color: 'Sand' }, { color: 'Slate' }],
      },
      {
        sku: 'LU-THROW',
        name: 'Waffle Cotton Throw',
        category: 'Home > Textiles > Throws',
        price: 69.0,
        description: 'Waffle-weave organic cotton throw, 130 × 170 cm.',
        features: ['Organic cotton', 'Machine washable'],
      },
      {
        sku: 'LU-BEDLIGHT',
        name: 'Dune Bedside Lamp',
        category: 'Home > Lighting > Table Lamps',
        price: 79.0,
        description: 'A travertine bedside lamp with a linen shade and a touch dimmer.',
        features: ['Travertine', 'Touch dimmer'],
        variants: [{ color: 'Ivory' }, { color: 'Clay' }],
      },
      {
        sku: 'LU-MIRROR',
        name: 'Round Wall Mirror',
        category: 'Home > Decor > Mirrors',
        price: 119.0,
        description: 'A 60 cm round mirror in a thin powder-coated frame.',
        features: ['60 cm', 'Wall mount included'],
      },
    ],
  },
  {
    name: 'Tidewater Coffee Roasters',
    site: 'https://tidewater.example',
    currency: 'USD',
    models: [
      {
        sku: 'TW-ETH',
        name: 'Ethiopia Guji Whole Bean',
        category: 'Grocery > Coffee > Whole Bean',
        price: 19.5,
        description: 'Washed Guji with notes of jasmine, bergamot and stone fruit. Light roast.',
        features: ['Single origin', 'Light roast'],
        variants: [{ size: '250 g' }, { size: '1 kg' }],
      },
      {
        sku: 'TW-COL',
        name: 'Colombia Huila Whole Bean',
        category: 'Grocery > Coffee > Whole Bean',
        price: 17.0,
        description: 'Caramel, red apple and milk chocolate. Medium roast.',
        features: ['Single origin', 'Medium roast'],
        variants: [{ size: '250 g' }, { size: '1 kg' }],
      },
      {
        sku: 'TW-HOUSE',
        name: 'House Espresso Blend',
        category: 'Grocery > Coffee > Espresso',
        price: 16.0,
        description: 'A chocolatey, forgiving espresso blend for milk drinks.',
        features: ['Blend', 'Medium-dark roast'],
      },
      {
        sku: 'TW-DECAF',
        name: 'Swiss Water Decaf',
        category: 'Grocery > Coffee > Decaf',
        price: 18.0,
        description: 'Chemical-free decaf that still tastes of coffee.',
        features: ['Swiss Water process'],
      },
      {
        sku: 'TW-COLD',
        name: 'Cold Brew Packs (6)',
        category: 'Grocery > Coffee > Cold Brew',
        price: 22.0,
        description: 'Six filter packs; steep overnight in a litre of water.',
        features: ['Makes 6 L', 'Compostable filters'],
      },
      {
        sku: 'TW-DRIP',
        name: 'Pour-Over Dripper',
        category: 'Kitchen > Coffee Gear > Brewers',
        price: 29.0,
        description: 'A ceramic cone dripper for one or two cups.',
        features: ['Ceramic', 'Fits #2 filters'],
      },
      {
        sku: 'TW-GRIND',
        name: 'Burr Hand Grinder',
        category: 'Kitchen > Coffee Gear > Grinders',
        price: 99.0,
        description: 'Stainless steel conical burrs with 40 click settings.',
        features: ['Conical burrs', '40 settings'],
      },
      {
        sku: 'TW-KETTLE',
        name: 'Gooseneck Kettle 0.9 L',
        category: 'Kitchen > Coffee Gear > Kettles',
        price: 64.0,
        description: 'Stovetop gooseneck kettle with a thermometer in the lid.',
        features: ['Built-in thermometer', 'Induction ready'],
      },
    ],
  },
  {
    name: 'Pixel Forge',
    site: 'https://pixelforge.example',
    currency: 'GBP',
    models: [
      {
        sku: 'PF-KB75',
        name: 'Forge 75 Mechanical Keyboard',
        category: 'Electronics > Computer Accessories > Keyboards',
        price: 139.0,
        description: 'Hot-swappable 75% keyboard with gasket mount and PBT keycaps.',
        features: ['Hot-swap', 'Gasket mount', 'USB-C'],
        variants: [{ color: 'Graphite' }, { color: 'Chalk' }],
      },
      {
        sku: 'PF-MOUSE',
        name: 'Glide Wireless Mouse',
        category: 'Electronics > Computer Accessories > Mice',
        price: 59.0,
        description: 'A 58 g wireless mouse with 80 hours of battery.',
        features: ['58 g', '80 h battery'],
      },
      {
        sku: 'PF-HUB',
        name: '8-in-1 USB-C Hub',
        category: 'Electronics > Computer Accessories > Hubs',
        price: 49.99,
        description: '4K HDMI, gigabit Ethernet, SD reader and 100 W pass-through.',
        features: ['100 W PD', '4K60 HDMI'],
      },
      {
        sku: 'PF-BUDS',
        name: 'Quiet Buds ANC Earbuds',
        category: 'Electronics > Audio > Earbuds',
        price: 119.0,
        description: 'Noise-cancelling earbuds with a wireless charging case.',
        features: ['ANC', 'Wireless charging'],
        variants: [{ color: 'Black' }, { color: 'White' }],
      },
      {
        sku: 'PF-SPK',
        name: 'Pocket Speaker',
        category: 'Electronics > Audio > Speakers',
        price: 39.0,
        description: 'Waterproof Bluetooth speaker with a strap.',
        features: ['IP67', '12 h battery'],
      },
      {
        sku: 'PF-CAM',
        name: '1080p Streaming Webcam',
        category: 'Electronics > Cameras > Webcams',
        price: 69.0,
        description: 'Autofocus webcam with a privacy shutter and two microphones.',
        features: ['Autofocus', 'Privacy shutter'],
      },
      {
        sku: 'PF-CABLE',
        name: 'Braided USB-C Cable 2 m',
        category: 'Electronics > Computer Accessories > Cables',
        price: 14.99,
        description: '240 W braided USB-C cable with a lifetime warranty.',
        features: ['240 W', 'Braided'],
        variants: [{ size: '1 m' }, { size: '2 m' }],
      },
      {
        sku: 'PF-STAND',
        name: 'Aluminium Laptop Stand',
        category: 'Electronics > Computer Accessories > Stands',
        price: 35.0,
        description: 'Folding stand with six height settings.',
        features: ['Foldable', '6 heights'],
      },
    ],
  },
];

/** The products of the demo catalogue: 4 brands, 3 currencies, variants, 3-level categories. */
export function demoProducts(): ProductCreateInput[] {
  const out: ProductCreateInput[] = [];
  let serial = 1;
  for (const brand of BRANDS) {
    for (const model of brand.models) {
      const variants = model.variants ?? [undefined];
      variants.forEach((variant, i) => {
        const suffix = variant
          ? [variant.color, variant.size]
              .filter(Boolean)
              .join('-')
              .replace(/\s+/g, '')
              .toUpperCase()
          : '';
        const id = variant ? `${model.sku}-${suffix}` : model.sku;
        const label = variant
          ? ` (${[variant.color, variant.size].filter(Boolean).join(', ')})`
          : '';
        const slug = id.toLowerCase();
        out.push({
          id,
          name: `${model.name}${label}`,
          description: model.description,
          price: model.price + (variant?.size === '1 kg' ? 40 : 0),
          currency: brand.currency,
          status: serial % 23 === 0 ? 'draft' : 'active',
          category: model.category,
          images: [
            `https://images.agentshelf.example/demo/${slug}/front.jpg`,
            `https://images.agentshelf.example/demo/${slug}/side.jpg`,
          ],
          attributes: {
            brand: brand.name,
            features: model.features,
            url: `${brand.site}/products/${slug}`,
            gtin: gtin13(serial),
            mpn: id,
            condition: 'new',
            availability: i === 2 ? 'out_of_stock' : 'in_stock',
            inventory_quantity: i === 2 ? 0 : 10 + ((serial * 7) % 90),
            ...(variant ? { item_group_id: model.sku } : {}),
            ...(variant?.color ? { color: variant.color } : {}),
            ...(variant?.size ? { size: variant.size } : {}),
          },
        });
        serial++;
      });
    }
  }
  // A few products without a brand: they belong to the store's own brand (STORE_NAME).
  out.push({
    id: 'GIFT-25',
    name: 'Gift Card 25',
    description: 'A gift card for anything in the store.',
    price: 25,
    category: 'Gift Cards',
    images: ['https://images.agentshelf.example/demo/gift-25/card.jpg'],
    attributes: { features: ['Never expires'], condition: 'new', availability: 'in_stock' },
  });
  out.push({
    id: 'GIFT-50',
    name: 'Gift Card 50',
    description: 'A gift card for anything in the store.',
    price: 50,
    category: 'Gift Cards',
    images: ['https://images.agentshelf.example/demo/gift-50/card.jpg'],
    attributes: { features: ['Never expires'], condition: 'new', availability: 'in_stock' },
  });
  return out;
}

/**
 * Writes the demo catalogue through the products domain (so each product records its event),
 * with sixty days of analytics (seed/demo-analytics.ts), in one transaction: the catalogue is
 * seeded whole or not at all, and announced once.
 */
export async function seedDemo(
  db: Db,
  defaults: { currency: string },
  options: { analytics?: boolean; now?: Date } = {},
): Promise<number> {
  const products = demoProducts();
  await withTransaction(db, async (trx) => {
    for (const product of products) await createProduct(trx, product, defaults);
    // Sixty days of agent traffic and conversions, so the first GET /v1/analytics shows some.
    if (options.analytics !== false) {
      await seedDemoAnalytics(trx, products, {
        currency: defaults.currency,
        now: options.now ?? new Date(),
      });
    }
  });
  return products.length;
}
