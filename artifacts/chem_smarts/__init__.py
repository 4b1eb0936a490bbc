"""Built-in oracle `chem_smarts`: reaction SMARTS applied with RDKit, then product descriptors."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from recon import Choice, Int, Integer, Number, Seed, SetOf, oracle

TEMPLATE_NAMES = [
    "esterification", "amide_coupling", "n_acetylation", "n_methylation", "o_acetylation",
    "dehalogenation", "alcohol_oxidation", "nitro_reduction", "ester_hydrolysis",
    "aromatic_bromination",
]

# Choice values ARE the SMILES (RDKit canonical form); names are in reference.REACTANTS.
REACTANT_SMILES = [
    "N[C@@H](Cc1ccc(O)cc1)C(=O)O",
    "C[C@H](O)C(=O)O",
    "CC(C)Cc1ccc([C@H](C)C(=O)O)cc1",
    "O=C(O)Cc1ccccc1Nc1c(Cl)cccc1Cl",
    "CN[C@@H](C)[C@H](O)c1ccccc1",
    "CCOC(=O)C[C@H](O)CCl",
    "O=C(N[C@H](CO)[C@H](O)c1ccc([N+](=O)[O-])cc1)C(Cl)Cl",
    "CCN(CC)CCOC(=O)c1ccc(N)cc1",
    "NC[C@H](CC(=O)O)c1ccc(Cl)cc1",
    "COC(=O)[C@@H](O)c1ccccc1",
    "[NH3+][C@@H](CO)C(=O)[O-]",
    "C[N+](C)(C)C[C@H](O)CC(=O)[O-]",
    "O=C(O)c1ccc([N+](=O)[O-])cc1Cl",
    "CCOC(=O)c1ccc(N)cc1",
    "CC(=O)Oc1ccccc1C(=O)O",
    "NC[C@H](O)c1ccc(O)c(O)c1",
    "Cc1ncc([N+](=O)[O-])n1CCO",
]


@oracle(
    name="chem_smarts",
    version="1.0.0",
    title="Reaction SMARTS application and product descriptors",
    domain="chemistry",
    toolkit=["rdkit"],
    axes={
        "substructure_query": Choice(TEMPLATE_NAMES),
        "reactant": Choice(REACTANT_SMILES),
        "fingerprint_radius": Int(1, 4),
        "stereochemistry": Choice(["keep", "strip"]),
        "protonation_state": Choice(["neutral", "charged"]),
        "conformer_seed": Seed(),
    },
    outputs={
        "products": SetOf(normalize="smiles"),
        "n_products": Integer(tol=0),
        "mw": Number(abs=0.02),
        "hba": Integer(tol=0),
        "hbd": Integer(tol=0),
        "tpsa": Number(abs=0.01),
        "fp_on": Integer(tol=0),
        "rg": Number(rel=0.25),
    },
    reference="reference.py",
    evidence={
        "reactant.smi": "one line, tab-separated: the reactant SMILES exactly as the reaction "
                        "saw it (after the protonation rules), then its name and the "
                        "protonation state in brackets",
        "products.sdf": "every product (sorted by canonical SMILES, one record each, title = "
                        "canonical SMILES, SD tags canonical_smiles and main_product 1/0) with "
                        "explicit hydrogens and the 3D conformer embedded with "
                        "conformer_seed exactly as for rg (in 'strip' mode the 3D record "
                        "necessarily shows one stereoisomer; the title does not); an empty "
                        "(0-byte) file when there is no product (RDKit's SDMolSupplier "
                        "rejects a 0-byte path: check the size or use ForwardSDMolSupplier)",
    },
)
def chem_smarts(params: dict[str, Any], evidence: Path) -> dict[str, Any]:
    """Apply a named reaction template (an RDKit reaction SMARTS) to one reactant molecule
    and describe what comes out.

    Parameters:
    - `reactant`: the reactant as a SMILES string (17 real molecules: amino acids,
      drugs, building blocks; several have stereocentres, several carry formal charges).
    - `protonation_state` rewrites the reactant BEFORE the reaction.  "neutral": every
      O-/S- that is not bonded to a cationic atom gains one H, and every N+ that carries
      an H loses one H (quaternary ammonium N+ and nitro groups stay as they are).
      "charged": first neutral, then every carboxylic acid O-H becomes O-, and every
      basic aliphatic amine N gains an H and a + charge (an amine N is basic when it is
      neutral, three-connected, not bonded to an aromatic atom, not an amide/sulfonamide/
      amidine-type N (not bonded to C, S or P that is double-bonded to O, S or N), not
      bonded to N or O, and not an enamine N).  Phenols, anilines and aromatic N are
      never (de)protonated.  Products are NOT re-protonated afterwards.
    - `substructure_query`: the template name.  Each template is a single-reactant
      reaction SMARTS; any co-reagent is implicit:
      esterification (carboxylic acid or carboxylate + methanol -> methyl ester);
      amide_coupling (carboxylic acid or carboxylate + methylamine -> N-methyl amide);
      n_acetylation (free primary/secondary amine, anilines included, + acetic acid ->
      acetamide; amide-type N and protonated N+ do not react); n_methylation (same
      amines -> one extra N-methyl); o_acetylation (alcohol or phenol O-H -> acetate
      ester; carboxylic acids do not react); dehalogenation (C-Cl, C-Br or C-I -> C-H;
      C-F is inert); alcohol_oxidation (primary alcohol -> aldehyde, secondary alcohol
      -> ketone; phenols and tertiary alcohols inert); nitro_reduction (nitro -> primary
      amine); ester_hydrolysis (ester + water -> carboxylic acid + alcohol or phenol,
      i.e. two product molecules); aromatic_bromination (any one aromatic C-H -> C-Br,
      every position, no regioselectivity).
      The template is applied with RDKit's RunReactants: one outcome per matching site,
      and only that one site is transformed in that outcome (no exhaustive multi-site
      reaction).  A pair with no matching site is a legitimate scenario.
    - `stereochemistry`: "keep" keeps the stereo tags RunReactants carries over (a
      centre that is destroyed disappears); "strip" removes all stereochemistry from the
      products before canonicalisation (so two stereoisomers can merge into one).
    - `fingerprint_radius`: radius of the Morgan fingerprint (fp_on).
    - `conformer_seed`: random seed of the 3D embedding (rg and the SD file).

    Outputs:
    - `products`: every product molecule of every outcome as RDKit canonical SMILES,
      duplicates removed (products that fail sanitisation are dropped); compared as a
      set of canonical SMILES.  `n_products` is its length.
    - The MAIN product is the product of highest average molecular weight (rounded to
      1e-6); ties go to the smallest canonical SMILES string (plain character order).
      `mw` = RDKit average molecular weight (Descriptors.MolWt), `hba`/`hbd` = RDKit
      Lipinski-style acceptor/donor counts (rdMolDescriptors.CalcNumHBA/CalcNumHBD),
      `tpsa` = RDKit topological polar surface area (N and O contributions only),
      `fp_on` = number of set bits of the Morgan fingerprint of radius
      `fingerprint_radius`, 2048 bits, from RDKit's fingerprint generator with default
      options (no chirality, no counts), all computed on the main product parsed from
      its canonical SMILES (hydrogens implicit).
      `rg` (Angstrom) = unweighted radius of gyration of the HEAVY atoms of one 3D
      conformer: parse the main product's canonical SMILES, add hydrogens, embed with
      ETKDG version 3 using randomSeed = conformer_seed (no force-field optimisation);
      if embedding fails, retry with random starting coordinates, and if that fails use
      2D depiction coordinates (never observed for these molecules).
    - With no product: products [], n_products 0, mw 0.0, hba 0, hbd 0, tpsa 0.0,
      fp_on 0, rg 0.0.

    Tolerances, and why:
    - products (set, after RDKit canonicalisation), n_products, hba, hbd, fp_on: exact.
      They are discrete functions of the molecular graph; any deviation means a wrong
      template scope, wrong protonation, wrong stereo handling or a wrong main product.
    - mw: 0.02 absolute.  Other standard atomic-weight tables (e.g. older IUPAC values)
      move these molecules by < 0.006; monoisotopic instead of average masses is off by
      >= 0.045 for every product here, and a wrong product by >= 1 unit.
    - tpsa: 0.01 absolute.  TPSA is a sum of tabulated 2-decimal contributions.
    - rg: 25 % relative.  A conformer is one random sample: different ETKDG versions,
      atom orders or seeds give different conformers.  Measured over 40 seeds for every
      one of the 180 main products reachable in this task, the largest pairwise spread
      is 20 % (|a - b| / max(a, b)), so 25 % admits any correctly built conformer.  rg
      is therefore only a coarse size check (it rejects 0, a missing conformer, or the
      wrong product, e.g. the small by-product); using exactly the recipe above with the
      pinned RDKit reproduces it to ~1e-6.
    """
    from rdkit import Chem

    from . import reference

    out = reference.solve({"parameters": dict(params), "inputs": {}})
    evidence = Path(evidence)
    reactant = reference.prepare_reactant(params["reactant"], params["protonation_state"])
    name = reference.REACTANTS.get(params["reactant"], "unnamed reactant")
    smi = Chem.MolToSmiles(reactant) if reactant is not None else params["reactant"]
    (evidence / "reactant.smi").write_text(
        f"{smi}\t{name} [{params['protonation_state']}]\n", encoding="utf-8")
    main = reference.main_product(out["products"])
    sdf = evidence / "products.sdf"
    sdf.write_bytes(b"")
    if out["products"]:
        writer = Chem.SDWriter(str(sdf))
        for psmi in out["products"]:
            molh = reference.embed(Chem.MolFromSmiles(psmi), int(params["conformer_seed"]))
            molh.SetProp("_Name", psmi)
            molh.SetProp("canonical_smiles", psmi)
            molh.SetProp("main_product", "1" if psmi == main else "0")
            writer.write(molh)
        writer.close()
    return out
