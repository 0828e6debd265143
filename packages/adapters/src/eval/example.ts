/**
 * A judged collection small enough to read (`quarry eval --example` writes it out and scores it):
 * appliance help pages, four questions and graded judgments (2 answers the question, 1 helps, 0
 * judged not relevant), in the files' own formats: BEIR's JSON lines and a qrels TSV with a header.
 */
export const EXAMPLE_FILES: Readonly<Record<'corpus.jsonl' | 'queries.jsonl' | 'qrels.tsv', string>> = {
  'corpus.jsonl': [
    '{"_id": "kettle-descale", "title": "Descaling a kettle", "text": "Fill the kettle halfway with equal parts white vinegar and water, bring it to the boil, leave it for an hour, then rinse twice. Limescale flakes come away from the element."}',
    '{"_id": "kettle-reset", "title": "Resetting the kettle", "text": "If the kettle switches off before the water boils, let it cool, then press the reset button under the base for three seconds. The thermostat trips when the kettle boils dry."}',
    '{"_id": "toaster-crumbs", "title": "Emptying the crumb tray", "text": "Unplug the toaster and let it cool. Slide out the crumb tray at the bottom and shake the crumbs into the bin. A full tray can smoke or catch fire."}',
    '{"_id": "toaster-shade", "title": "Browning control", "text": "Turn the dial from 1 for light toast to 6 for dark toast. Frozen bread needs the defrost button, which adds a minute before browning starts."}',
    '{"_id": "grinder-clean", "title": "Cleaning the coffee grinder", "text": "Grind a spoonful of dry rice to absorb the oils, then brush the burrs. Never wash the burrs with water: they rust."}',
    '{"_id": "grinder-size", "title": "Grind size", "text": "Use a coarse grind for a French press, medium for filter coffee and fine for espresso. A finer grind extracts faster and tastes more bitter."}',
    '{"_id": "warranty", "title": "Warranty", "text": "Every appliance is covered for two years from the date of purchase. Keep the receipt; damage from limescale or misuse is not covered."}',
    '{"_id": "recycling", "title": "Recycling old appliances", "text": "Take broken appliances to a recycling centre. Electrical waste must not go in household bins."}',
    '',
  ].join('\n'),
  'queries.jsonl': [
    '{"_id": "q1", "text": "how do I remove limescale from my kettle"}',
    '{"_id": "q2", "text": "kettle turns off before boiling"}',
    '{"_id": "q3", "text": "toaster smoking"}',
    '{"_id": "q4", "text": "which grind for espresso"}',
    '',
  ].join('\n'),
  'qrels.tsv': [
    'query-id\tcorpus-id\tscore',
    'q1\tkettle-descale\t2',
    'q1\twarranty\t1',
    'q2\tkettle-reset\t2',
    'q3\ttoaster-crumbs\t2',
    'q4\tgrinder-size\t2',
    'q4\tgrinder-clean\t0',
    '',
  ].join('\n'),
}
